import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SessionDiff, SessionSnapshot, SubmitTurnReceipt } from '@tether/protocol';
import { type ClaudeTestEnvironment, type GitRunner, createGitRepository } from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import {
  type Client,
  daemonPerTest,
  openEventStream,
  readEventsUntil,
  sseFrames,
} from '../daemon/daemon-test-helpers.js';

/*
 * git_worktree sessions end to end: the daemon as `tether serve` composes it (the git acquirer under
 * <dataDir>/worktrees), real git, the real claude binary writing files through its Write tool
 * (auto_edit: no approval) against the fake API.
 */
const { start } = daemonPerTest();

type ErrorBody = { error: { code: string; message: string; details?: { reason?: string } } };

interface Repository {
  readonly folder: string;
  readonly git: GitRunner;
}

async function repositoryIn(environment: ClaudeTestEnvironment): Promise<Repository> {
  const folder = path.join(environment.workspace, 'repository');
  const git = await createGitRepository(
    folder,
    { 'README.md': 'hello\n' },
    { PATH: '/usr/bin:/bin', HOME: environment.home },
  );
  return { folder, git };
}

async function snapshotOf(api: Client, sessionId: string): Promise<SessionSnapshot> {
  return (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
}

async function openWorktree(api: Client, repository: string, extra: Record<string, unknown> = {}) {
  const { sessionId } = await api.command({
    type: 'open_session',
    permissionMode: 'auto_edit',
    workspace: { kind: 'git_worktree', repository, ...extra },
  });
  const snapshot = await snapshotOf(api, sessionId);
  return { sessionId, snapshot, directory: snapshot.workspaceStatus!.directory };
}

/** One turn in which the fake model writes `content` to `file` with the Write tool; every event up to its run.files_changed. */
async function writeTurn(
  setup: { environment: ClaudeTestEnvironment; daemon: { url: string; token: string }; api: Client },
  sessionId: string,
  file: string,
  content: string,
): Promise<{ runId: string; events: ProtocolEvent[] }> {
  const frames = sseFrames((await openEventStream(setup.daemon, sessionId)).body!);
  setup.environment.api.enqueue(toolUseReply('Write', { file_path: file, content }), textReply('Written.'));
  const { runId } = await setup.api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text: `Write ${path.basename(file)}.` }],
  });
  const events = await readEventsUntil(frames, (event) => event.type === 'run.files_changed' && event.runId === runId);
  await frames.return(undefined);
  return { runId, events };
}

async function diffOf(api: Client, sessionId: string): Promise<SessionDiff> {
  const response = await api.request('GET', `/v1/sessions/${sessionId}/diff`);
  expect(response.status).toBe(200);
  return (await response.json()) as SessionDiff;
}

const branchesOf = (repository: Repository) =>
  repository.git('branch', '--list', '--format=%(refname:short)').trim().split('\n').filter(Boolean).sort();
const worktreePaths = (repository: Repository) =>
  repository
    .git('worktree', 'list', '--porcelain')
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));

describe('sessions in git worktrees, through the daemon', () => {
  it('two sessions on one repository write the same file name each in its own worktree; the main checkout is unchanged; each run and the session diff name the file with its lines', async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    const head = repository.git('rev-parse', 'HEAD').trim();
    const first = await openWorktree(setup.api, repository.folder);
    const second = await openWorktree(setup.api, repository.folder);

    for (const session of [first, second]) {
      expect(session.snapshot.workspaceStatus).toEqual({
        kind: 'git_worktree',
        directory: session.directory,
        worktree: {
          repository: repository.folder,
          path: session.directory,
          branch: `tether/${session.sessionId.slice(4, 12)}`,
          baseCommit: head,
        },
        state: 'ready',
        keptBecause: null,
        changedFiles: 0,
      });
      expect(session.directory.startsWith(path.join(setup.environment.home, 'tether-data', 'worktrees'))).toBe(true);
    }
    expect(first.directory).not.toBe(second.directory);

    const wroteFirst = await writeTurn(
      setup,
      first.sessionId,
      path.join(first.directory, 'notes.txt'),
      'first\nsession\n',
    );
    const wroteSecond = await writeTurn(setup, second.sessionId, path.join(second.directory, 'notes.txt'), 'second\n');
    expect(wroteFirst.events.find((event) => event.type === 'session.workspace_ready')).toMatchObject({
      workspace: { state: 'ready', directory: first.directory },
    });
    expect(wroteFirst.events.at(-1)).toEqual(
      expect.objectContaining({
        type: 'run.files_changed',
        runId: wroteFirst.runId,
        files: [{ path: 'notes.txt', status: 'added', added: 2, removed: 0, binary: false }],
        truncated: false,
      }),
    );
    expect(wroteSecond.events.at(-1)).toMatchObject({
      type: 'run.files_changed',
      files: [{ path: 'notes.txt', status: 'added', added: 1, removed: 0, binary: false }],
    });
    // The run ended before its files were compared.
    const completedAt = wroteFirst.events.findIndex(
      (event) => event.type === 'run.completed' && event.runId === wroteFirst.runId,
    );
    expect(completedAt).toBeGreaterThan(-1);

    expect(readFileSync(path.join(first.directory, 'notes.txt'), 'utf8')).toBe('first\nsession\n');
    expect(readFileSync(path.join(second.directory, 'notes.txt'), 'utf8')).toBe('second\n');
    expect(existsSync(path.join(repository.folder, 'notes.txt'))).toBe(false);
    expect(repository.git('status', '--porcelain')).toBe('');
    expect(repository.git('rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('main');

    const firstDiff = await diffOf(setup.api, first.sessionId);
    expect(firstDiff).toMatchObject({
      sessionId: first.sessionId,
      baseCommit: head,
      branch: first.snapshot.workspaceStatus!.worktree!.branch,
      files: [{ path: 'notes.txt', status: 'added', added: 2, removed: 0, binary: false }],
      truncated: false,
    });
    expect(firstDiff.diff).toContain('+++ b/notes.txt');
    expect(firstDiff.diff).toContain('+first\n+session\n');
    expect(firstDiff.diff).not.toContain('second');
    expect((await diffOf(setup.api, second.sessionId)).diff).toContain('+second\n');
    const cut = (await (
      await setup.api.request('GET', `/v1/sessions/${first.sessionId}/diff?maxBytes=20`)
    ).json()) as SessionDiff;
    expect(cut).toMatchObject({ truncated: true, files: firstDiff.files });
    expect(Buffer.byteLength(cut.diff)).toBeLessThanOrEqual(20);

    expect((await snapshotOf(setup.api, first.sessionId)).workspaceStatus?.changedFiles).toBe(1);
  });

  it('closing a session whose turn changed nothing removes its worktree and branch; one with changes is kept and says where; delete refuses to discard that work unless told to', async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    const clean = await openWorktree(setup.api, repository.folder);
    const busy = await openWorktree(setup.api, repository.folder, { branch: 'feature/busy' });
    const cleanBranch = clean.snapshot.workspaceStatus!.worktree!.branch;

    const frames = sseFrames((await openEventStream(setup.daemon, clean.sessionId)).body!);
    setup.environment.api.enqueue(textReply('Nothing to change.'));
    const { runId } = await setup.api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId: clean.sessionId,
      input: [{ type: 'text', text: 'Look around.' }],
    });
    const cleanRun = await readEventsUntil(
      frames,
      (event) => event.type === 'run.files_changed' && event.runId === runId,
    );
    expect(cleanRun.at(-1)).toMatchObject({ files: [], truncated: false });
    await writeTurn(setup, busy.sessionId, path.join(busy.directory, 'draft.txt'), 'work in progress\n');
    expect(branchesOf(repository)).toEqual(['feature/busy', cleanBranch, 'main'].sort());

    await setup.api.command({ type: 'close_session', sessionId: clean.sessionId });
    const released = await readEventsUntil(frames, (event) => event.type === 'session.workspace_released');
    await frames.return(undefined);
    expect(released.at(-1)).toMatchObject({
      workspace: { state: 'removed', keptBecause: null, directory: clean.directory },
    });
    expect(existsSync(clean.directory)).toBe(false);
    expect(branchesOf(repository)).toEqual(['feature/busy', 'main']);

    const busyFrames = sseFrames((await openEventStream(setup.daemon, busy.sessionId)).body!);
    await setup.api.command({ type: 'close_session', sessionId: busy.sessionId });
    const busyReleased = await readEventsUntil(busyFrames, (event) => event.type === 'session.workspace_released');
    await busyFrames.return(undefined);
    expect(busyReleased.at(-1)).toMatchObject({
      workspace: { state: 'kept', keptBecause: 'uncommitted_changes', worktree: { path: busy.directory } },
    });
    const kept = (await snapshotOf(setup.api, busy.sessionId)).workspaceStatus;
    expect(kept).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
      directory: busy.directory,
      worktree: { branch: 'feature/busy', path: busy.directory },
    });
    expect(readFileSync(path.join(busy.directory, 'draft.txt'), 'utf8')).toBe('work in progress\n');

    const refused = await setup.api.request('DELETE', `/v1/sessions/${busy.sessionId}`);
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as ErrorBody;
    expect(error).toMatchObject({ code: 'workspace_has_changes', details: { reason: 'uncommitted_changes' } });
    expect(error.message).toContain(busy.directory);
    expect(error.message).toContain('feature/busy');
    expect(existsSync(path.join(busy.directory, 'draft.txt'))).toBe(true);
    expect((await setup.api.request('GET', `/v1/sessions/${busy.sessionId}`)).status).toBe(200);

    const deleted = await setup.api.request('DELETE', `/v1/sessions/${busy.sessionId}?discardWorkspaceChanges=true`);
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({
      sessionId: busy.sessionId,
      workspaceStatus: { state: 'removed', directory: busy.directory, worktree: { branch: 'feature/busy' } },
    });
    expect((await setup.api.request('GET', `/v1/sessions/${busy.sessionId}`)).status).toBe(404);
    expect(existsSync(busy.directory)).toBe(false);
    expect(branchesOf(repository)).toEqual(['main']);
    expect(worktreePaths(repository)).toEqual([repository.folder]);
  });

  it('a delete sent together with a reopen or a fork of the session wins whole: the other is refused, nothing is left unnamed; sent after, the fork keeps the worktree', async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    const post = (body: Record<string, unknown>) =>
      setup.api.request('POST', '/v1/commands', { body: { commandId: `race-${Math.random()}`, ...body } });
    const closed = async (extra: Record<string, unknown> = {}) => {
      const session = await openWorktree(setup.api, repository.folder, extra);
      await setup.api.command({ type: 'close_session', sessionId: session.sessionId });
      return session;
    };
    // A reopen makes the released worktree again (git takes a while): the delete before it is over first.
    const reopened = await closed();
    const [deleted, reopen] = await Promise.all([
      setup.api.request('DELETE', `/v1/sessions/${reopened.sessionId}`),
      post({ type: 'open_session', continueSession: reopened.sessionId }),
    ]);
    // Whichever came first, the other was refused whole: deleted (the reopen finds nothing), or open (not deleted).
    if (deleted.status === 200) {
      expect([reopen.status, ((await reopen.json()) as ErrorBody).error.code]).toEqual([404, 'session_not_found']);
      expect((await setup.api.request('GET', `/v1/sessions/${reopened.sessionId}`)).status).toBe(404);
      expect(branchesOf(repository)).toEqual(['main']);
      expect(worktreePaths(repository)).toEqual([repository.folder]);
    } else {
      expect([deleted.status, ((await deleted.json()) as ErrorBody).error.code, reopen.status]).toEqual([
        409,
        'session_open',
        200,
      ]);
      const status = (await snapshotOf(setup.api, reopened.sessionId)).workspaceStatus;
      expect(status).toMatchObject({ state: 'ready' });
      expect(existsSync(status!.directory)).toBe(true);
    }

    // A fork of a closed session whose worktree holds work, and a delete that discards it.
    const forked = await openWorktree(setup.api, repository.folder);
    await writeTurn(setup, forked.sessionId, path.join(forked.directory, 'draft.txt'), 'work in progress\n');
    await setup.api.command({ type: 'close_session', sessionId: forked.sessionId });
    const discard = `/v1/sessions/${forked.sessionId}?discardWorkspaceChanges=true`;
    const [forkFirst, deleteAfter] = await Promise.all([
      post({ type: 'fork_session', sessionId: forked.sessionId }),
      setup.api.request('DELETE', discard),
    ]);
    expect(deleteAfter.status).toBe(200);
    const { workspaceStatus } = (await deleteAfter.json()) as {
      workspaceStatus: { state: string; keptBecause: string };
    };
    if (forkFirst.status !== 200) {
      expect(workspaceStatus.state).toBe('removed');
      // The delete came first: the fork found no session, and nothing is left of the worktree.
      expect([forkFirst.status, ((await forkFirst.json()) as ErrorBody).error.code]).toEqual([
        404,
        'session_not_found',
      ]);
      expect(worktreePaths(repository)).toEqual([repository.folder]);
      return;
    }
    // The delete saw the fork: the worktree stays for it, and its next turn works there.
    expect(workspaceStatus).toMatchObject({ state: 'kept', keptBecause: 'in_use' });
    const { forkSessionId } = (await forkFirst.json()) as { forkSessionId: string };
    expect((await snapshotOf(setup.api, forkSessionId)).workspaceStatus).toMatchObject({ directory: forked.directory });
    expect(readFileSync(path.join(forked.directory, 'draft.txt'), 'utf8')).toBe('work in progress\n');
    const frames = sseFrames((await openEventStream(setup.daemon, forkSessionId)).body!);
    setup.environment.api.enqueue(textReply('Still here.'));
    const { runId } = await setup.api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId: forkSessionId,
      input: [{ type: 'text', text: 'Look.' }],
    });
    const run = await readEventsUntil(frames, (event) => event.type === 'run.completed' && event.runId === runId);
    await frames.return(undefined);
    expect(run.at(-1)).toMatchObject({ outcome: 'succeeded' });
  });

  it("a locked worktree refuses its session's delete (left, it would have no session naming it); with discard it goes", async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    const session = await openWorktree(setup.api, repository.folder);
    const branch = session.snapshot.workspaceStatus!.worktree!.branch;
    repository.git('worktree', 'lock', session.directory);
    await setup.api.command({ type: 'close_session', sessionId: session.sessionId });
    expect((await snapshotOf(setup.api, session.sessionId)).workspaceStatus).toMatchObject({
      state: 'kept',
      keptBecause: 'locked',
    });
    const refused = await setup.api.request('DELETE', `/v1/sessions/${session.sessionId}`);
    expect(refused.status).toBe(409);
    const { error } = (await refused.json()) as ErrorBody;
    expect(error).toMatchObject({ code: 'workspace_has_changes', details: { reason: 'locked' } });
    expect(error.message).toContain('git worktree unlock');
    expect((await setup.api.request('GET', `/v1/sessions/${session.sessionId}`)).status).toBe(200);
    expect(branchesOf(repository)).toEqual([branch, 'main'].sort());
    const discarded = await setup.api.request(
      'DELETE',
      `/v1/sessions/${session.sessionId}?discardWorkspaceChanges=true`,
    );
    expect(discarded.status).toBe(200);
    expect(branchesOf(repository)).toEqual(['main']);
    expect(worktreePaths(repository)).toEqual([repository.folder]);
  });

  it('a daemon stopped while a worktree is being made answers that open_session 503 runtime_stopped (not applied), nothing left', async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    const started = path.join(setup.environment.home, 'hook-started');
    await writeFile(
      path.join(repository.folder, '.git', 'hooks', 'post-checkout'),
      `#!/bin/sh\necho $$ > '${started}'\nexec sleep 60\n`,
      { mode: 0o755 },
    );
    const opening = setup.api.request('POST', '/v1/commands', {
      body: {
        commandId: 'open-while-stopping',
        type: 'open_session',
        workspace: { kind: 'git_worktree', repository: repository.folder },
      },
    });
    await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 30_000, interval: 20 });
    const closing = setup.daemon.close();
    const response = await opening;
    expect(response.status).toBe(503);
    expect(((await response.json()) as ErrorBody).error).toMatchObject({ code: 'runtime_stopped' });
    await closing;
    expect(branchesOf(repository)).toEqual(['main']);
    expect(worktreePaths(repository)).toEqual([repository.folder]);
  });

  it('refuses what cannot be a worktree with 400 invalid_workspace and its reason, recording nothing', async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    repository.git('branch', 'taken');
    const plain = path.join(setup.environment.workspace, 'plain');
    await mkdir(plain);
    const bare = path.join(setup.environment.workspace, 'bare.git');
    repository.git('clone', '--quiet', '--bare', repository.folder, bare);

    const refusals: [Record<string, unknown>, string][] = [
      [{ repository: plain }, 'not_a_git_repository'],
      [{ repository: path.join(setup.environment.workspace, 'missing') }, 'missing'],
      [{ repository: bare }, 'bare_repository'],
      [{ repository: repository.folder, baseRef: 'no-such-branch' }, 'unknown_ref'],
      [{ repository: repository.folder, branch: 'taken' }, 'branch_exists'],
      [{ repository: repository.folder, branch: 'two..dots' }, 'invalid_branch'],
    ];
    for (const [workspace, reason] of refusals) {
      const response = await setup.api.request('POST', '/v1/commands', {
        body: {
          type: 'open_session',
          commandId: `open-${reason}-${Math.random()}`,
          workspace: { kind: 'git_worktree', ...workspace },
        },
      });
      expect(response.status, JSON.stringify(workspace)).toBe(400);
      const { error } = (await response.json()) as ErrorBody;
      expect(error, JSON.stringify(workspace)).toMatchObject({ code: 'invalid_workspace', details: { reason } });
    }
    const { sessions } = (await (await setup.api.request('GET', '/v1/sessions')).json()) as {
      sessions: SessionSnapshot[];
    };
    expect(sessions).toEqual([]);
    expect(branchesOf(repository)).toEqual(['main', 'taken']);
    expect(worktreePaths(repository)).toEqual([repository.folder]);
  });

  it('ten sessions opened at once on one repository each get their own worktree and branch', async () => {
    const setup = await start();
    const repository = await repositoryIn(setup.environment);
    const opened = await Promise.all(Array.from({ length: 10 }, () => openWorktree(setup.api, repository.folder)));
    const directories = new Set(opened.map((session) => session.directory));
    const branches = new Set(opened.map((session) => session.snapshot.workspaceStatus!.worktree!.branch));
    expect(directories.size).toBe(10);
    expect(branches.size).toBe(10);
    expect(branchesOf(repository)).toEqual([...branches, 'main'].sort());
    expect(worktreePaths(repository).sort()).toEqual([repository.folder, ...directories].sort());
    for (const session of opened)
      expect(readFileSync(path.join(session.directory, 'README.md'), 'utf8')).toBe('hello\n');
  });
});
