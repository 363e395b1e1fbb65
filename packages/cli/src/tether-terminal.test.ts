import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { afterEach, describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';

// `tether run` at a real terminal: util-linux `script` gives the command a pseudo-terminal, and the
// test types into it when the prompt appears.

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/tether.js');
const fixture = useCommandFixture('tether-tty-');
let child: ChildProcess | undefined;

// Registered after the fixture's, so it runs before the fixture removes the test's folder.
afterEach(() => {
  if (child?.exitCode === null) child.kill('SIGKILL');
});

function atTerminal(
  prompt: string,
  keys: { after: string; type: string | (() => void) }[],
): Promise<{ code: number | null; output: string }> {
  const environment = { ...fixture.environment, TERM: 'xterm' };
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} run ${JSON.stringify(prompt)}`;
  return new Promise((resolve, reject) => {
    const spawned = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: fixture.workspace,
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
        if (typeof next.type === 'string') spawned.stdin!.write(next.type);
        else next.type();
      }
    });
    spawned.on('error', reject);
    spawned.on('close', (code) => resolve({ code, output }));
  });
}

describe('tether run at a terminal, through a daemon', () => {
  const { serve } = useTetherServe(fixture);

  it('a prompt answered elsewhere leaves the terminal: the menu is given up and tether run ends with the run', async () => {
    const url = await serve(['--no-web']);
    const token = (await readFile(path.join(fixture.root, 'data', 'daemon-token'), 'utf8')).trim();
    const api = (route: string, body?: unknown) =>
      fetch(`${url}${route}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then((response) => response.json());
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo elsewhere > elsewhere.txt', description: 'Write a file' }),
      textReply('Approved by someone else.'),
    );
    const approveElsewhere = async () => {
      const { sessions } = (await api('/v1/sessions')) as {
        sessions: { sessionId: string; pendingInteractions: { interactionRef: string }[] }[];
      };
      const [session] = sessions;
      await api('/v1/commands', {
        type: 'respond_interaction',
        commandId: `cmd_${Date.now()}`,
        sessionId: session!.sessionId,
        interactionRef: session!.pendingInteractions[0]!.interactionRef,
        answer: { decision: 'approve', scope: 'once' },
      });
    };
    const result = await atTerminal('Write it', [{ after: 'approve once', type: () => void approveElsewhere() }]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('no longer asked');
    expect(result.output).toContain('Approved by someone else.');
    expect(await readFile(path.join(fixture.workspace, 'elsewhere.txt'), 'utf8')).toBe('elsewhere\n');
  });
});

describe('tether run at a terminal', () => {
  it('shows an approval as a menu and runs the tool when approve is chosen with Enter', async () => {
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo tty > tty.txt', description: 'Write a file' }),
      textReply('Done at the terminal.'),
    );
    const result = await atTerminal('Write it', [{ after: 'approve once', type: '\r' }]);
    expect(result.code).toBe(0);
    expect(result.output).toContain('Bash (command) wants to run');
    expect(result.output).toContain('echo tty > tty.txt');
    expect(result.output).toContain('Done at the terminal.');
    expect(await readFile(path.join(fixture.workspace, 'tty.txt'), 'utf8')).toBe('tty\n');
  });

  it("edits the command before approving: the edited line runs, not the model's", async () => {
    fixture.api.enqueue(
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
    expect(await readFile(path.join(fixture.workspace, 'edited.txt'), 'utf8')).toBe('edited\n');
    await expect(readFile(path.join(fixture.workspace, 'model.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('offers no one-line edit for a command of several lines: its prefill would be typed into the editor, where a line break acts as a key', async () => {
    const command = 'echo one > one.txt\necho two > two.txt';
    fixture.api.enqueue(toolUseReply('Bash', { command, description: 'Write two files' }), textReply('Not run.'));
    const down = '\u001b[B';
    const result = await atTerminal('Write them', [{ after: 'approve once', type: `${down}\r` }]);
    expect(result.code, result.output).toBe(0);
    expect(result.output).toContain('deny and stop the run');
    expect(result.output).not.toContain('edit the command');
    expect(result.output).toContain('denied');
    await expect(readFile(path.join(fixture.workspace, 'one.txt'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('denies with the arrow keys, and answers questions with numbers and free text', async () => {
    fixture.api.enqueue(
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
    const turns = fixture.api.requests.filter((request) => request.kind === 'turn');
    expect(turns[1]!.view!.toolResults[0]).toMatchObject({ isError: true });
    const answers = turns[2]!.view!.toolResults[0]!.content;
    expect(answers).toContain('"Which color?"="Blue"');
    expect(answers).toContain('make it shiny');
  });
});
