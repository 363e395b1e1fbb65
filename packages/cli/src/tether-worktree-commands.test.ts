import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SessionDiff, SessionSnapshot } from '@tether/protocol';
import { type GitRunner, createGitRepository, workingDirectoryResponder } from '@tether/testkit';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-worktree-');
const { serve } = useTetherServe(fixture);

let repository: string;
let git: GitRunner;

beforeEach(async () => {
  repository = path.join(fixture.root, 'repository');
  git = await createGitRepository(repository, { 'README.md': 'hello\n' }, fixture.environment);
  // The agent writes notes.txt (with the prompt after "Write ") in whatever folder it runs in: the session's worktree.
  fixture.api.setResponder(
    workingDirectoryResponder((directory, request) => {
      if (request.toolResults.length > 0) return textReply('Done.');
      // The prompt is the message's last line (the CLI puts its reminders before it).
      const write = /(?:^|\n)Write ([^\n]*)$/.exec(request.lastUserText);
      if (!write) return textReply('Nothing to change.');
      return toolUseReply('Write', {
        file_path: path.join(directory, 'notes.txt'),
        content: write[1]!.replaceAll('|', '\n'),
      });
    }),
  );
});

function tether(args: readonly string[]): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment }).finished;
}

async function succeeds(args: readonly string[]): Promise<FinishedTether> {
  const result = await tether(args);
  expect(result.code, result.stderr).toBe(0);
  return result;
}

function sessionIdIn(text: string): string {
  const match = /session (ses_[0-9a-f]{32})/.exec(text);
  if (!match) throw new Error(`no session id in: ${text}`);
  return match[1]!;
}

/** `tether run --worktree` in the repository, with file edits allowed. */
const editingRunInWorktree = (prompt: string) =>
  succeeds(['run', '--worktree', '--cwd', repository, '--permission-mode', 'auto_edit', prompt]);
const turnRequests = () => fixture.api.requests.filter((request) => request.kind === 'turn');
const branches = () => git('branch', '--list', '--format=%(refname:short)').trim().split('\n').sort();

describe('tether run --worktree, diff, sessions and show without a daemon', () => {
  it("keeps the agent's git in its worktree when tether runs with GIT_DIR and GIT_WORK_TREE of another repository", async () => {
    // A tether started from a git hook, or inside another checkout, inherits these.
    const other = path.join(fixture.root, 'other');
    const otherGit = await createGitRepository(other, { 'OTHER.md': 'other\n' }, fixture.environment);
    const otherHead = otherGit('rev-parse', 'HEAD');
    fixture.api.setResponder((request) =>
      request.toolResults.length > 0
        ? textReply(`git said: ${request.toolResults.map((result) => result.content).join(' ')}`)
        : toolUseReply('Bash', {
            command: 'echo agent > agent.txt && git add -A && git commit -qm agent && git rev-parse --show-toplevel',
          }),
    );
    const run = await spawnTether(['run', '--worktree', '--cwd', repository, '--approve', 'allow-once', 'Commit'], {
      cwd: fixture.workspace,
      environment: {
        ...fixture.environment,
        GIT_DIR: path.join(other, '.git'),
        GIT_WORK_TREE: other,
        // Who the agent's commit is by (kept: it names no repository).
        GIT_AUTHOR_NAME: 'Agent',
        GIT_AUTHOR_EMAIL: 'agent@tether.invalid',
        GIT_COMMITTER_NAME: 'Agent',
        GIT_COMMITTER_EMAIL: 'agent@tether.invalid',
      },
    }).finished;
    expect(run.code, run.stderr).toBe(0);
    const sessionId = sessionIdIn(run.stderr);
    const worktree = path.join(fixture.root, 'data', 'worktrees', sessionId);
    expect(run.stdout).toBe(`git said: ${worktree}\n`);
    // The commit is on the session's branch; the other repository and the session's own checkout are untouched.
    expect(git('log', '-1', '--format=%s', `tether/${sessionId.slice(4, 12)}`).trim()).toBe('agent');
    expect(otherGit('rev-parse', 'HEAD')).toBe(otherHead);
    expect(otherGit('status', '--porcelain')).toBe('');
    expect(git('status', '--porcelain')).toBe('');
  });

  it("runs in a worktree of its own: the turn's changed files, where the worktree is, the diff, the list's branch and count", async () => {
    const run = await editingRunInWorktree('Write one|two|');
    const sessionId = sessionIdIn(run.stderr);
    const branch = `tether/${sessionId.slice(4, 12)}`;
    const worktree = path.join(fixture.root, 'data', 'worktrees', sessionId);
    expect(run.stdout).toBe('Done.\n');
    expect(run.stderr).toContain('  · 1 file changed: notes.txt +2 −0\n');
    expect(run.stderr).toContain(
      `  worktree ${worktree} on branch ${branch} (1 file changed); kept while the session is open\n`,
    );
    expect(run.stderr).toContain(`  review: tether diff ${sessionId} · close: tether close ${sessionId}`);
    expect(readFileSync(path.join(worktree, 'notes.txt'), 'utf8')).toBe('one\ntwo\n');
    expect(existsSync(path.join(repository, 'notes.txt'))).toBe(false);
    expect(git('status', '--porcelain')).toBe('');

    const diff = await succeeds(['diff', sessionId]);
    expect(diff.stdout).toContain('+++ b/notes.txt\n');
    expect(diff.stdout).toContain('+one\n+two\n');
    expect(diff.stderr).toContain(
      `1 file changed on branch ${branch} since ${git('rev-parse', 'HEAD').slice(0, 12)}:\n`,
    );
    expect(diff.stderr).toContain('  A notes.txt  +2 −0\n');
    const json = JSON.parse((await succeeds(['diff', sessionId, '--json'])).stdout) as SessionDiff;
    expect(json).toMatchObject({ sessionId, branch, truncated: false, files: [{ path: 'notes.txt', added: 2 }] });
    const cut = await succeeds(['diff', sessionId, '--max-bytes', '10']);
    expect(cut.stderr).toContain('(the diff was cut at 10 bytes');

    expect((await succeeds(['sessions'])).stdout).toContain(`${worktree} · branch ${branch} · 1 file changed`);
    expect((await succeeds(['show', sessionId])).stdout).toContain(
      `\n  worktree ${worktree} on branch ${branch} (1 file changed)\n`,
    );

    // Resumed from the repository's folder (what --worktree was given): the next run's files, in --json too.
    const again = await succeeds(['run', '--json', '--resume', sessionId, '--cwd', repository, 'Write one|three|']);
    const events = again.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ProtocolEvent);
    expect(events.at(-1)).toMatchObject({
      type: 'run.files_changed',
      files: [{ path: 'notes.txt', status: 'modified', added: 1, removed: 1, binary: false }],
    });
    // The run's end comes before its files (compared once it has ended); a session event, e.g. the
    // context measured a moment after the run, may come between them on a slow machine.
    const completed = events.findIndex((event) => event.type === 'run.completed');
    expect(events[completed]).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    expect(completed).toBeLessThan(events.length - 1);

    const elsewhere = path.join(fixture.root, 'elsewhere');
    const rooted = await succeeds([
      'run',
      '--worktree',
      '--worktree-root',
      elsewhere,
      '--cwd',
      repository,
      'Look around',
    ]);
    expect(rooted.stderr).toContain(`  worktree ${path.join(elsewhere, sessionIdIn(rooted.stderr))} on branch `);
  });
});

describe('tether close and delete without a daemon', () => {
  it('a session made by tether run alone is closed (its clean worktree and branch removed) and deleted from the data dir', async () => {
    const run = await succeeds(['run', '--worktree', '--cwd', repository, 'Look around']);
    const sessionId = sessionIdIn(run.stderr);
    const open = await tether(['delete', sessionId]);
    expect(open.code).toBe(1);
    expect(open.stderr).toContain('[session_open]');
    expect(open.stderr).toContain(`\`tether close ${sessionId}\`, then delete it`);

    const closed = await succeeds(['close', sessionId]);
    expect(closed.stderr).toMatch(/^closed; worktree removed with its branch/m);
    expect(branches()).toEqual(['main']);
    expect(JSON.parse((await succeeds(['show', sessionId, '--json'])).stdout)).toMatchObject({ state: 'closed' });

    // Ctrl-C while --resume makes the worktree again: git is stopped, and what it began goes with it.
    const resumed = await interruptedWhileTheWorktreeIsMade(['run', '--resume', sessionId, 'Go on']);
    expect(resumed.code, resumed.stderr).toBe(130);
    expect(branches()).toEqual(['main']);
    expect(git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(JSON.parse((await succeeds(['show', sessionId, '--json'])).stdout)).toMatchObject({
      state: 'closed',
      workspaceStatus: { state: 'removed' },
    });
    // --json: the API's answer, on stdout.
    const deleted = await succeeds(['delete', sessionId, '--json']);
    expect(JSON.parse(deleted.stdout)).toMatchObject({ sessionId, workspaceStatus: { state: 'removed' } });
    expect((await succeeds(['sessions', '--json'])).stdout).toBe('[]\n');
  });

  it('a repository with no commit nested in the worktree: its files are left out of the comparison, the rest is read, and close keeps the work', async () => {
    const run = await succeeds(['run', '--worktree', '--cwd', repository, 'Look around']);
    const sessionId = sessionIdIn(run.stderr);
    const worktree = path.join(fixture.root, 'data', 'worktrees', sessionId);
    const nested = path.join(worktree, 'nested');
    // A repository with no commit yet (an agent's `git init` of a sub-project): git refuses to add it to an index.
    await mkdir(nested);
    execFileSync('git', ['init', '--quiet'], {
      cwd: nested,
      env: { ...fixture.environment, GIT_CONFIG_NOSYSTEM: '1' },
    });
    await writeFile(path.join(nested, 'work.txt'), 'important\n');
    await writeFile(path.join(worktree, 'top.txt'), 'beside it\n');
    const diff = await succeeds(['diff', sessionId]);
    expect(diff.stdout).toContain('+beside it\n');
    expect(diff.stdout).not.toContain('important');
    const closed = await succeeds(['close', sessionId]);
    expect(closed.stderr).toContain(`closed; worktree kept at ${worktree}`);
    expect(closed.stderr).toContain('it has uncommitted changes');
    expect(readFileSync(path.join(nested, 'work.txt'), 'utf8')).toBe('important\n');
    expect(branches()).toEqual(['main', `tether/${sessionId.slice(4, 12)}`]);
  });
});

describe('tether close, delete and diff through a daemon', () => {
  it('Ctrl-C while the daemon makes the worktree: the session it opens is discarded, worktree and branch too, and no turn is sent', async () => {
    const worktrees = path.join(fixture.root, 'served-worktrees');
    await serve(['--worktree-root', worktrees]);
    const run = await interruptedWhileTheWorktreeIsMade(['run', '--worktree', '--cwd', repository, 'Write draft|']);
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toMatch(/■ the turn was not sent; deleting the session ses_[0-9a-f]{32} opened for it\n/);
    const listed = await succeeds(['sessions', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual([]);
    expect(branches()).toEqual(['main']);
    expect(existsSync(worktrees) ? readdirSync(worktrees) : []).toEqual([]);
    expect(turnRequests()).toEqual([]);
  });

  it('Ctrl-C while tether send reopens a closed session (its worktree made again): no turn is sent, and the session is closed again', async () => {
    const worktrees = path.join(fixture.root, 'served-worktrees');
    await serve(['--worktree-root', worktrees]);
    const sessionId = sessionIdIn((await succeeds(['run', '--worktree', '--cwd', repository, 'Look around'])).stderr);
    await succeeds(['close', sessionId]);
    const turnsBefore = turnRequests().length;
    const sent = await interruptedWhileTheWorktreeIsMade(['send', sessionId, 'Go on']);
    expect(sent.code, sent.stderr).toBe(130);
    expect(sent.stderr).toContain(`■ the turn was not sent; closing the session ${sessionId} again\n`);
    const shown = JSON.parse((await succeeds(['show', sessionId, '--json'])).stdout) as SessionSnapshot;
    expect(shown.state).toBe('closed');
    expect(shown.workspaceStatus?.state).toBe('removed');
    expect(turnRequests()).toHaveLength(turnsBefore);
  });

  it('close says where a worktree with work is kept and that a clean one was removed; delete refuses that work without --discard-changes', async () => {
    const worktrees = path.join(fixture.root, 'served-worktrees');
    await serve(['--worktree-root', worktrees]);
    const busy = await succeeds([
      'run',
      '--worktree',
      '--branch',
      'feature/notes',
      '--cwd',
      repository,
      '--permission-mode',
      'auto_edit',
      'Write draft|',
    ]);
    const busyId = sessionIdIn(busy.stderr);
    const busyWorktree = path.join(worktrees, busyId);
    expect(busy.stderr).toContain(`  worktree ${busyWorktree} on branch feature/notes (1 file changed)`);
    expect((await succeeds(['diff', busyId])).stdout).toContain('+draft\n');

    const clean = await succeeds(['run', '--worktree', '--cwd', repository, 'Look around']);
    const cleanId = sessionIdIn(clean.stderr);
    expect(clean.stderr).toContain('  · no files changed\n');
    const cleanBranch = `tether/${cleanId.slice(4, 12)}`;
    expect(branches()).toEqual(['feature/notes', 'main', cleanBranch].sort());

    const closedClean = await succeeds(['close', cleanId]);
    expect(closedClean.stderr).toBe(
      `closed; worktree removed with its branch ${cleanBranch}: it held no changes (files git ignores, such as build output, are not kept)\n`,
    );
    expect(existsSync(path.join(worktrees, cleanId))).toBe(false);
    const closedBusy = await succeeds(['close', busyId]);
    expect(closedBusy.stderr).toBe(
      `closed; worktree kept at ${busyWorktree} on branch feature/notes (1 file changed): it has uncommitted changes\n`,
    );
    expect((await succeeds(['sessions'])).stdout).toContain('· branch feature/notes · 1 file changed (worktree kept)');

    const refused = await tether(['delete', busyId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[workspace_has_changes]');
    expect(refused.stderr).toContain(`tether delete ${busyId} --discard-changes`);
    expect(readFileSync(path.join(busyWorktree, 'notes.txt'), 'utf8')).toBe('draft\n');

    // A fork shares the worktree: deleting it, discarding or not, leaves the work to the session it came from.
    const forkId = (await succeeds(['fork', busyId])).stdout.trim();
    expect((await succeeds(['close', forkId])).stderr).toBe(
      `closed; worktree kept at ${busyWorktree} on branch feature/notes (1 file changed): it has uncommitted changes\n`,
    );
    const forkDeleted = await succeeds(['delete', forkId, '--discard-changes']);
    expect(forkDeleted.stderr).toBe(
      `deleted ${forkId}; its worktree ${busyWorktree} and branch feature/notes stay with the session that shares them (a fork, or the session it was forked from)\n`,
    );
    expect(readFileSync(path.join(busyWorktree, 'notes.txt'), 'utf8')).toBe('draft\n');
    expect(branches()).toEqual(['feature/notes', 'main']);

    const deleted = await succeeds(['delete', busyId, '--discard-changes']);
    expect(deleted.stderr).toBe(`deleted ${busyId} with its worktree ${busyWorktree} and branch feature/notes\n`);
    expect(existsSync(busyWorktree)).toBe(false);
    expect(branches()).toEqual(['main']);
    expect((await tether(['show', busyId])).code).toBe(1);
    await succeeds(['delete', cleanId]);
    expect((await succeeds(['sessions', '--json'])).stdout).toBe('[]\n');
  });
});

/**
 * A tether command Ctrl-C'd while its worktree is being made: git's post-checkout hook holds the making
 * until the command has said it is stopping, then lets it go. What the command ended with.
 */
async function interruptedWhileTheWorktreeIsMade(args: readonly string[]): Promise<FinishedTether> {
  const marker = path.join(fixture.root, 'making-the-worktree');
  const hook = path.join(repository, '.git', 'hooks', 'post-checkout');
  await writeFile(hook, `#!/bin/sh\ntouch '${marker}'\nwhile [ -e '${marker}' ]; do sleep 0.05; done\n`);
  await chmod(hook, 0o755);
  let stderr = '';
  const { child, finished } = spawnTether(args, {
    cwd: fixture.workspace,
    environment: fixture.environment,
    onStderr: (text) => {
      stderr += text;
    },
  });
  await vi.waitFor(() => expect(existsSync(marker)).toBe(true), { timeout: 30_000, interval: 20 });
  child.kill('SIGINT');
  await vi.waitFor(() => expect(stderr).toContain('■ SIGINT: stopping the run and exiting'), {
    timeout: 30_000,
    interval: 20,
  });
  await rm(marker);
  return finished;
}

/**
 * `tether run --worktree` held in making its worktree by a post-checkout hook that takes its time (a
 * big checkout, a slow hook manager): its process and the hook's pid, once the hook runs.
 */
async function runWhileAHookWaits() {
  const started = path.join(fixture.root, 'hook-started');
  const hook = path.join(repository, '.git', 'hooks', 'post-checkout');
  await writeFile(hook, `#!/bin/sh\necho $$ > '${started}'\nexec sleep 60\n`, { mode: 0o755 });
  const { child, finished } = spawnTether(['run', '--worktree', '--cwd', repository, 'Write nothing'], {
    cwd: fixture.workspace,
    environment: fixture.environment,
  });
  await vi.waitFor(() => expect(existsSync(started) && readFileSync(started, 'utf8').trim()).toMatch(/^\d+$/), {
    timeout: 30_000,
    interval: 20,
  });
  return { child, finished, hookPid: Number(readFileSync(started, 'utf8').trim()) };
}

describe('refusals and help', () => {
  it('a folder that is not a repository, an unknown base: exit 2, no turn; --base without --worktree is a usage error', async () => {
    const plain = await tether(['run', '--worktree', '--cwd', fixture.workspace, 'Write x|']);
    expect(plain.code).toBe(2);
    expect(plain.stderr).toContain('[invalid_workspace]');
    const unknownBase = await tether(['run', '--worktree', '--base', 'nope', '--cwd', repository, 'Write x|']);
    expect(unknownBase.code).toBe(2);
    expect(unknownBase.stderr).toContain('[invalid_workspace]');
    expect(unknownBase.stderr).toContain('nope');
    // A turn refused at submit takes the session opened for it along, worktree and branch included.
    const notAnImage = path.join(fixture.root, 'not-an-image.png');
    await writeFile(notAnImage, 'plain text');
    const refusedTurn = await tether(['run', '--worktree', '--cwd', repository, '--image', notAnImage, 'Write x|']);
    expect(refusedTurn.code).toBe(2);
    expect(refusedTurn.stderr).toContain('[invalid_command]');
    expect(turnRequests()).toHaveLength(0);
    expect((await succeeds(['sessions', '--json'])).stdout).toBe('[]\n');
    expect(branches()).toEqual(['main']);
    expect(git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);

    const baseAlone = await tether(['run', '--base', 'main', 'x']);
    expect(baseAlone.code).toBe(2);
    expect(baseAlone.stderr).toContain('add --worktree');
    const resumed = await tether(['run', '--worktree', '--resume', `ses_${'0'.repeat(32)}`, 'x']);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('a resumed session keeps its own workspace');
    const badSize = await tether(['diff', `ses_${'0'.repeat(32)}`, '--max-bytes', '0']);
    expect(badSize.code).toBe(2);
    expect(badSize.stderr).toContain('--max-bytes takes a whole number');
  });

  it("--file names the repository's file: the agent reads the worktree's copy; one the worktree lacks is refused, nothing left", async () => {
    await writeFile(path.join(repository, 'README.md'), 'hello\nan edit not committed\n');
    const run = await succeeds([
      'run',
      '--worktree',
      '--cwd',
      repository,
      '--file',
      path.join(repository, 'README.md'),
      'Look around',
    ]);
    const worktree = path.join(fixture.root, 'data', 'worktrees', sessionIdIn(run.stderr));
    expect(run.stderr).toContain('file README.md');
    const attached = turnRequests().at(-1)!.view!.attachedFiles;
    expect(attached.map((file) => file.filePath)).toEqual([path.join(worktree, 'README.md')]);
    expect(attached[0]!.content).toContain('hello');
    expect(attached[0]!.content).not.toContain('an edit not committed');

    await writeFile(path.join(repository, 'untracked.txt'), 'only in the main checkout\n');
    const requestsBefore = turnRequests().length;
    const refused = await tether([
      'run',
      '--worktree',
      '--cwd',
      repository,
      '--file',
      path.join(repository, 'untracked.txt'),
      'Look',
    ]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('[invalid_command]');
    expect(refused.stderr).toContain(`the session's worktree has no untracked.txt`);
    expect(turnRequests()).toHaveLength(requestsBefore);
    expect(branches()).toEqual(['main', `tether/${sessionIdIn(run.stderr).slice(4, 12)}`]);
    expect(git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(2);
  });

  it('SIGTERM while the worktree is being made stops git and its hook, takes back the branch and folder, and records nothing', async () => {
    const { child, finished, hookPid } = await runWhileAHookWaits();
    child.kill('SIGTERM');
    const result = await finished;
    expect(result.code, result.stderr).toBe(143);
    // The hook went with git: nothing of the worktree's making outlives tether.
    await vi.waitFor(() =>
      expect(
        existsSync(`/proc/${hookPid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${hookPid}/status`, 'utf8')),
      ).toBe(false),
    );
    expect(branches()).toEqual(['main']);
    expect(git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(turnRequests()).toHaveLength(0);
    const sessions = await tether(['sessions', '--json']);
    expect(sessions.stdout.trim()).toBe('[]');
  });

  // The exit watch reads /proc: Linux only.
  it.runIf(process.platform === 'linux')(
    'SIGKILL while the worktree is being made: git and its hook end with tether all the same, and the next tether takes back the half-made worktree and branch',
    async () => {
      const { child, finished, hookPid } = await runWhileAHookWaits();
      const branch = branches().find((name) => name !== 'main');
      expect(branch).toMatch(/^tether\//);
      child.kill('SIGKILL');
      await finished;
      // No code of tether's runs any more: its exit watch ends git's group, the hook with it.
      await vi.waitFor(
        () =>
          expect(
            existsSync(`/proc/${hookPid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${hookPid}/status`, 'utf8')),
          ).toBe(false),
        { timeout: 10_000 },
      );
      // Left half-made, named by no session: its branch, its folder and git's registration of it.
      expect(branches()).toEqual(['main', branch]);
      const worktrees = path.join(fixture.root, 'data', 'worktrees');
      const sessionFolders = () => readdirSync(worktrees).filter((name) => name.startsWith('ses_'));
      expect(sessionFolders()).toHaveLength(1);
      // The next command on the data dir takes them back before anything else.
      expect((await succeeds(['sessions', '--json'])).stdout).toBe('[]\n');
      expect(branches()).toEqual(['main']);
      expect(sessionFolders()).toEqual([]);
      expect(git('worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    },
  );

  it('close through a daemon of a worktree deleted by hand whose branch has commits: says the folder is gone and the commits are on the branch; delete refuses them until they are merged', async () => {
    const worktrees = path.join(fixture.root, 'served-worktrees');
    await serve(['--worktree-root', worktrees]);
    const run = await succeeds(['run', '--worktree', '--cwd', repository, 'Look around']);
    const sessionId = sessionIdIn(run.stderr);
    const worktree = path.join(worktrees, sessionId);
    await writeFile(path.join(worktree, 'committed.txt'), 'kept\n');
    git('-C', worktree, 'add', 'committed.txt');
    git('-C', worktree, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '--quiet', '-m', 'work');
    await rm(worktree, { recursive: true, force: true });
    const closed = await succeeds(['close', sessionId]);
    const branch = `tether/${sessionId.slice(4, 12)}`;
    expect(closed.stderr).toContain(`worktree folder ${worktree} is gone; its commits are kept on branch ${branch}`);
    expect(closed.stderr).not.toContain('git reflog in it');
    expect(branches()).toContain(branch);

    // Those commits are the work a delete would lose, until another branch holds them too.
    const refused = await tether(['delete', sessionId]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[workspace_has_changes]');
    git('merge', '--quiet', '--ff-only', branch);
    const deleted = await succeeds(['delete', sessionId]);
    expect(deleted.stderr).toBe(`deleted ${sessionId} with its worktree ${worktree} and branch ${branch}\n`);
    expect(branches()).toEqual(['main']);
    expect(git('show', 'main:committed.txt')).toBe('kept\n');
  });

  it('close through a daemon of a worktree moved with git worktree move: says so, and neither --resume nor delete takes it from where it is', async () => {
    const worktrees = path.join(fixture.root, 'served-worktrees');
    await serve(['--worktree-root', worktrees]);
    const run = await succeeds(['run', '--worktree', '--cwd', repository, 'Look around']);
    const sessionId = sessionIdIn(run.stderr);
    const worktree = path.join(worktrees, sessionId);
    const branch = `tether/${sessionId.slice(4, 12)}`;
    const elsewhere = path.join(fixture.root, 'moved-by-hand');
    await writeFile(path.join(worktree, 'draft.txt'), 'mine\n');
    git('worktree', 'move', worktree, elsewhere);

    const closed = await succeeds(['close', sessionId]);
    expect(closed.stderr).toContain(
      `worktree folder ${worktree} is gone and its branch ${branch} is checked out in another folder`,
    );
    const resumed = await tether(['run', '--resume', sessionId, 'Go on']);
    expect(resumed.code, resumed.stderr).toBe(2);
    expect(resumed.stderr).toContain(`git worktree move FOLDER ${worktree}`);
    const deleted = await succeeds(['delete', sessionId, '--discard-changes']);
    expect(deleted.stderr).toBe(
      `deleted ${sessionId}; its branch ${branch} stays checked out in another folder (git worktree list shows where)\n`,
    );
    expect(readFileSync(path.join(elsewhere, 'draft.txt'), 'utf8')).toBe('mine\n');
    expect(git('-C', elsewhere, 'branch', '--show-current').trim()).toBe(branch);

    // Moved after the close kept it: the delete says what it found then, not what the close recorded.
    const later = sessionIdIn((await succeeds(['run', '--worktree', '--cwd', repository, 'Look around'])).stderr);
    const laterWorktree = path.join(worktrees, later);
    const laterBranch = `tether/${later.slice(4, 12)}`;
    await writeFile(path.join(laterWorktree, 'draft.txt'), 'mine too\n');
    expect((await succeeds(['close', later])).stderr).toContain(`worktree kept at ${laterWorktree}`);
    const laterElsewhere = path.join(fixture.root, 'moved-after-close');
    git('worktree', 'move', laterWorktree, laterElsewhere);
    expect((await succeeds(['delete', later, '--discard-changes'])).stderr).toBe(
      `deleted ${later}; its branch ${laterBranch} stays checked out in another folder (git worktree list shows where)\n`,
    );
    expect(readFileSync(path.join(laterElsewhere, 'draft.txt'), 'utf8')).toBe('mine too\n');
  });

  it('a data dir moved with its worktrees: the session goes on in the moved worktree, its uncommitted work and conversation intact', async () => {
    const run = await editingRunInWorktree('Write first');
    const sessionId = sessionIdIn(run.stderr);
    const oldWorktree = path.join(fixture.root, 'data', 'worktrees', sessionId);
    await writeFile(path.join(oldWorktree, 'uncommitted.txt'), 'mine\n');
    const movedData = path.join(fixture.root, 'moved-data');
    await rename(path.join(fixture.root, 'data'), movedData);
    const resumed = await succeeds(['run', '--data-dir', movedData, '--resume', sessionId, 'Look around']);
    const newWorktree = path.join(movedData, 'worktrees', sessionId);
    expect(resumed.stderr).toContain(`worktree ${newWorktree}`);
    // The agent works where the worktree is now.
    expect(JSON.stringify(turnRequests().at(-1)!.body)).toContain(newWorktree);
    expect(readFileSync(path.join(newWorktree, 'notes.txt'), 'utf8')).toBe('first');
    expect(readFileSync(path.join(newWorktree, 'uncommitted.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(oldWorktree)).toBe(false);
    // The agent had its conversation: the first turn is in the second turn's request.
    expect(JSON.stringify(turnRequests().at(-1)!.body)).toContain('Write first');
    const diff = await succeeds(['diff', '--data-dir', movedData, sessionId]);
    expect(diff.stdout).toContain('+mine\n');
  });

  it('a directory session has no diff: capability_unsupported, exit 2', async () => {
    const run = await succeeds(['run', 'Look around']);
    const diff = await tether(['diff', sessionIdIn(run.stderr)]);
    expect(diff.code).toBe(2);
    expect(diff.stderr).toContain('[capability_unsupported]');
  });

  it('diff, delete, close, run and serve print their usage with the new options, exit 0', async () => {
    const usage = async (command: string) => (await succeeds([command, '--help'])).stdout;
    expect(await usage('diff')).toContain('usage: tether diff SESSION [--json] [--max-bytes N]');
    expect(await usage('delete')).toContain('usage: tether delete SESSION [--discard-changes]');
    expect(await usage('close')).toContain('kept, and this says where');
    const run = await usage('run');
    for (const option of ['--worktree', '--base REF', '--branch NAME', '--worktree-root DIR'])
      expect(run).toContain(option);
    expect(await usage('serve')).toContain('--worktree-root DIR');
    const main = (await succeeds(['--help'])).stdout;
    expect(main).toContain('tether diff ');
    expect(main).toContain('tether delete ');
  });
});
