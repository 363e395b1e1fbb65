import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type FakeAnthropicApi, startFakeAnthropicApi, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { testClaudePath } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { commandEnvironment } from './test-support/command-environment.js';

// `tether run` at a real terminal: util-linux `script` gives the command a pseudo-terminal, and the
// test types into it when the prompt appears.

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/tether.js');
let root: string;
let api: FakeAnthropicApi;
let child: ChildProcess | undefined;

beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'tether-tty-')));
  await Promise.all(['home', 'workspace', 'tmp'].map((directory) => mkdir(path.join(root, directory))));
  api = await startFakeAnthropicApi();
});

afterEach(async () => {
  if (child?.exitCode === null) child.kill('SIGKILL');
  await api.close();
  await rm(root, { recursive: true, force: true });
});

function atTerminal(
  prompt: string,
  keys: { after: string; type: string }[],
): Promise<{ code: number | null; output: string }> {
  // TMPDIR under root: the CLI keeps files there (claude-<uid>/, cc-socks/), which go with the test.
  const environment = commandEnvironment(
    { root, apiUrl: api.url, claudePath: testClaudePath() },
    { TERM: 'xterm', TMPDIR: path.join(root, 'tmp') },
  );
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} run ${JSON.stringify(prompt)}`;
  return new Promise((resolve, reject) => {
    const spawned = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: path.join(root, 'workspace'),
      env: environment,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child = spawned;
    let output = '';
    const pending = [...keys];
    spawned.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const next = pending[0];
      if (next && output.includes(next.after)) {
        pending.shift();
        spawned.stdin!.write(next.type);
      }
    });
    spawned.on('error', reject);
    spawned.on('close', (code) => resolve({ code, output }));
  });
}

describe('tether run at a terminal', () => {
  it('shows an approval as a menu and runs the tool when approve is chosen with Enter', async () => {
    api.enqueue(
      toolUseReply('Bash', { command: 'echo tty > tty.txt', description: 'Write a file' }),
      textReply('Done at the terminal.'),
    );
    const result = await atTerminal('Write it', [{ after: 'approve once', type: '\r' }]);
    expect(result.code).toBe(0);
    expect(result.output).toContain('Bash (command) wants to run');
    expect(result.output).toContain('echo tty > tty.txt');
    expect(result.output).toContain('Done at the terminal.');
    expect(await readFile(path.join(root, 'workspace', 'tty.txt'), 'utf8')).toBe('tty\n');
  });

  it("edits the command before approving: the edited line runs, not the model's", async () => {
    api.enqueue(
      toolUseReply('Bash', { command: 'echo model > model.txt', description: 'Write a file' }),
      textReply('Ran your version.'),
    );
    const eraseLine = '\u0015';
    const result = await atTerminal('Write it', [
      { after: 'edit the command', type: '5' },
      { after: 'command ›', type: `${eraseLine}echo edited > edited.txt\r` },
    ]);
    expect(result.code).toBe(0);
    expect(result.output).toContain('Ran your version.');
    expect(await readFile(path.join(root, 'workspace', 'edited.txt'), 'utf8')).toBe('edited\n');
    await expect(readFile(path.join(root, 'workspace', 'model.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('denies with the arrow keys, and answers questions with numbers and free text', async () => {
    api.enqueue(
      toolUseReply('Bash', { command: 'echo no > no.txt', description: 'Write' }),
      toolUseReply('AskUserQuestion', {
        questions: [
          {
            question: 'Which color?',
            header: 'Color',
            options: [
              { label: 'Red', description: 'warm' },
              { label: 'Blue', description: 'cool' },
            ],
            multiSelect: false,
          },
          {
            question: 'Anything else?',
            header: 'Notes',
            options: [
              { label: 'No', description: '' },
              { label: 'Yes', description: '' },
            ],
            multiSelect: false,
          },
        ],
      }),
      textReply('Noted.'),
    );
    const down = '\u001b[B';
    const result = await atTerminal('Do things', [
      { after: 'approve once', type: `${down}${down}\r` },
      { after: 'Which color?', type: '2\r' },
      { after: 'Anything else?', type: 'make it shiny\r' },
    ]);
    expect(result.code).toBe(0);
    expect(result.output).toContain('denied');
    const turns = api.requests.filter((request) => request.kind === 'turn');
    expect(turns[1]!.view!.toolResults[0]).toMatchObject({ isError: true });
    const answers = turns[2]!.view!.toolResults[0]!.content;
    expect(answers).toContain('"Which color?"="Blue"');
    expect(answers).toContain('make it shiny');
  });
});
