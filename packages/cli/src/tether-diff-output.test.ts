import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { SessionDiff } from '@tether/protocol';
import { type GitRunner, createGitRepository, workingDirectoryResponder } from '@tether/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, sessionIdFrom, spawnTether, tetherBin } from './test-support/spawn-tether.js';

// What `tether diff` and `tether run` print about a worktree's files, read the way a script or a
// person reads it: the diff saved to a file must apply, and each listed file must take one line.

const fixture = useCommandFixture('tether-diff-output-');

let repository: string;
let git: GitRunner;

// A name whose line break would otherwise print a second entry that is not there.
const forgedName = 'evil\n  D README.md  +0 −1';

beforeEach(async () => {
  repository = path.join(fixture.root, 'repository');
  git = await createGitRepository(
    repository,
    { 'README.md': 'hello\n', 'windows.txt': 'one\r\ntwo\r\n' },
    fixture.environment,
  );
  // "Name X" makes the agent write a file named X (a "|" in it stands for a line break) in its worktree.
  fixture.api.setResponder(
    workingDirectoryResponder((directory, request) => {
      if (request.toolResults.length > 0) return textReply('Done.');
      const name = /(?:^|\n)Name ([^\n]*)$/.exec(request.lastUserText);
      if (!name) return textReply('Nothing to change.');
      return toolUseReply('Write', { file_path: path.join(directory, name[1]!.replaceAll('|', '\n')), content: 'x\n' });
    }),
  );
});

async function tether(args: readonly string[]): Promise<FinishedTether> {
  const result = await spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment }).finished;
  expect(result.code, result.stderr).toBe(0);
  return result;
}

/** A worktree session of the repository (no daemon); its id and its worktree's folder. */
async function worktreeSession(prompt = 'Look around'): Promise<{ sessionId: string; worktree: string }> {
  const run = await tether(['run', '--worktree', '--cwd', repository, '--permission-mode', 'auto_edit', prompt]);
  const sessionId = sessionIdFrom(run.stderr);
  return { sessionId, worktree: path.join(fixture.root, 'data', 'worktrees', sessionId) };
}

describe('tether diff and a worktree turn list their files as they are', () => {
  it("tether diff into a file is git's diff byte for byte: a CRLF file's edit applies with git apply", async () => {
    const { sessionId, worktree } = await worktreeSession();
    await writeFile(path.join(worktree, 'windows.txt'), 'one\r\nTWO\r\n');
    await writeFile(path.join(worktree, 'colours.txt'), '\u001b[31mred\u001b[0m\n');

    const diff = await tether(['diff', sessionId]);
    const exact = JSON.parse((await tether(['diff', sessionId, '--json'])).stdout) as SessionDiff;

    expect(diff.stdout).toBe(exact.diff);
    expect(diff.stdout).toContain('-two\r\n+TWO\r\n');
    const patch = path.join(fixture.root, 'session.patch');
    await writeFile(patch, diff.stdout);
    // The repository's own checkout is the base: the saved diff applies there as it is.
    git('apply', '--check', patch);
    git('apply', patch);
    expect(git('diff', '--', 'windows.txt')).toContain('-two\r\n+TWO\r\n');
  });

  it('tether diff gives each file one line: a name with a line break is quoted, not split', async () => {
    const { sessionId, worktree } = await worktreeSession();
    await writeFile(path.join(worktree, forgedName), 'x\n');
    await writeFile(path.join(worktree, 'tab\tand\u001b[31mescape.txt'), 'y\n');

    const diff = await tether(['diff', sessionId]);

    const lines = diff.stderr.split('\n');
    expect(lines).toContain('  A "evil\\n  D README.md  +0 −1"  +1 −0');
    expect(lines).toContain('  A "tab\\tand\\u001b[31mescape.txt"  +1 −0');
    expect(lines).not.toContain('  D README.md  +0 −1');
    expect(lines.filter((line) => line.startsWith('  '))).toHaveLength(2);
  });

  it("tether run's changed-files line quotes a name with a line break", async () => {
    const run = await tether([
      'run',
      '--worktree',
      '--cwd',
      repository,
      '--permission-mode',
      'auto_edit',
      'Name notes|  · 1 file changed: README.md +0 −1',
    ]);

    expect(run.stderr).toContain('  · 1 file changed: "notes\\n  · 1 file changed: README.md +0 −1" +1 −0\n');
    expect(run.stderr.split('\n')).not.toContain('  · 1 file changed: README.md +0 −1 +1 −0');
  });

  it('tether diff at a terminal shows the diff with control sequences and carriage returns removed', async () => {
    const { sessionId, worktree } = await worktreeSession();
    await writeFile(path.join(worktree, 'windows.txt'), 'one\r\nTWO\u001b]0;title\u0007\r\n');

    const shown = await atTerminal(['diff', sessionId]);

    expect(shown.code).toBe(0);
    // The terminal turns each line end into CRLF; what tether wrote had none of its own, nor the escape.
    expect(shown.output.replaceAll('\r\n', '\n')).toContain('-two\n+TWO\n');
    expect(shown.output).not.toContain('\u001b]0;');
  });
});

/** `tether ARGS` with a pseudo-terminal as its stdout and stderr (util-linux `script`), as a person runs it. */
function atTerminal(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, tetherBin, ...args].map((word) => JSON.stringify(word)).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      cwd: fixture.workspace,
      env: { ...fixture.environment, TERM: 'dumb' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}
