import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { AgentError, type ChangedFile, type ProtocolEvent } from '@tether/protocol';
import {
  type FakeWorkspaceAcquirer,
  type MockProvider,
  agentErrorOf,
  createFakeWorkspaceAcquirer,
  createMockProvider,
  replyWithCheckpoint,
  waitForEvent,
} from '@tether/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';
import type { AgentRuntime } from './runtime-types.js';

const harness = runtimePerTest('tether-workspaces-');
let acquirer: FakeWorkspaceAcquirer;
let provider: MockProvider;
let runtime: AgentRuntime;
/** What the fake had been asked when each turn reached the agent. */
let stepsAtTurn: string[][];

beforeEach(async () => {
  const root = path.join(harness.workspace, 'worktrees');
  await mkdir(root);
  acquirer = createFakeWorkspaceAcquirer({ root });
  stepsAtTurn = [];
  const reply = replyWithCheckpoint('done');
  provider = createMockProvider({
    capabilities: { fork: true },
    turn: (context) => {
      stepsAtTurn.push(acquirer.calls.map((call) => call.step));
      return reply(context);
    },
  });
  runtime = await harness.start({ providers: [provider], workspaces: [acquirer] });
});

const repository = () => harness.workspace;
const worktree = (branch?: string) => ({
  kind: 'git_worktree' as const,
  repository: repository(),
  ...(branch ? { branch } : {}),
});
const types = (events: readonly ProtocolEvent[]) => events.map((event) => event.type);
const steps = () => acquirer.calls.map((call) => call.step);

function changed(file: string, added = 1): ChangedFile {
  return { path: file, status: 'added', added, removed: 0, binary: false };
}

/** A session and its fork, both closed, their shared worktree kept for its uncommitted changes. */
async function closedWithAForkAndWork(branch: string) {
  const { sessionId } = await runtime.openSession({ workspace: worktree(branch) });
  await turn(sessionId);
  const directory = (await runtime.getSession(sessionId)).workspaceStatus!.directory;
  const { forkSessionId } = await runtime.forkSession({ sessionId });
  acquirer.setWork(directory, 'uncommitted_changes');
  await runtime.closeSession({ sessionId });
  await runtime.closeSession({ sessionId: forkSessionId });
  return { sessionId, forkSessionId, directory };
}

async function turn(sessionId: string, text = 'write it'): Promise<string> {
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  await runtime.waitForRun(runId);
  return runId;
}

describe('a session in a workspace its acquirer makes', () => {
  it('is prepared before anything is recorded: the agent runs in it, the log and the snapshot say it is ready', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree('feature/x') });
    const directory = path.join(repository(), 'worktrees', sessionId);
    expect(acquirer.calls).toEqual([{ step: 'prepare', subject: sessionId }]);
    const events = await runtime.readEvents(sessionId);
    expect(types(events)).toEqual(['session.opened', 'session.workspace_ready']);
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.workspace).toEqual(worktree('feature/x'));
    expect(snapshot.workspaceStatus).toMatchObject({
      kind: 'git_worktree',
      directory,
      state: 'ready',
      worktree: { repository: repository(), path: directory, branch: 'feature/x' },
    });
    expect(events[1]).toMatchObject({ workspace: snapshot.workspaceStatus });
    await turn(sessionId);
    expect(provider.sessions[0]!.options.workspace).toEqual({ kind: 'directory', path: directory });
  });

  it('is not opened when its acquirer refuses it, and nothing is recorded or started', async () => {
    acquirer.failNext('prepare');
    const error = await agentErrorOf(runtime.openSession({ workspace: worktree('taken') }));
    expect(error.code).toBe('invalid_workspace');
    expect(error.details?.reason).toBe('branch_exists');
    expect(await runtime.listSessions()).toEqual([]);
    expect(provider.sessions).toEqual([]);
    expect(steps()).toEqual(['prepare']);
  });

  it('is refused as unsupported_kind by a runtime given no acquirer for its kind', async () => {
    const bare = await harness.start({ providers: [createMockProvider()] });
    const error = await agentErrorOf(bare.openSession({ workspace: worktree() }));
    expect(error.code).toBe('invalid_workspace');
    expect(error.details?.reason).toBe('unsupported_kind');
    expect(error.message).toContain('git_worktree');
    expect(await bare.listSessions()).toEqual([]);
  });

  it('gives back the workspace it made when the opening fails after it', async () => {
    const refusing = await harness.start({
      providers: [createMockProvider({ openError: new AgentError({ code: 'invalid_command', message: 'no' }) })],
      workspaces: [acquirer],
    });
    await expect(refusing.openSession({ workspace: worktree() })).rejects.toThrow('no');
    const prepared = acquirer.calls[0]!;
    expect(steps()).toEqual(['prepare', 'release']);
    expect(acquirer.calls[1]!.release).toEqual({ discardChanges: false, inUse: false });
    expect(existsSync(path.join(repository(), 'worktrees', prepared.subject))).toBe(false);
    expect(await refusing.listSessions()).toEqual([]);
  });

  it("takes a baseline before each turn reaches the agent and tells the run's changed files after it ends", async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree() });
    acquirer.setChanges({ run: [changed('notes.md', 3)], session: [changed('notes.md', 3), changed('old.md')] });
    const runId = await turn(sessionId);
    const filesChanged = await waitForEvent(runtime, sessionId, 'run.files_changed');
    expect(filesChanged).toMatchObject({ runId, files: [changed('notes.md', 3)], truncated: false });
    expect(stepsAtTurn).toEqual([['prepare', 'baseline']]);
    const events = await runtime.readEvents(sessionId);
    const completedAt = events.findIndex((event) => event.type === 'run.completed');
    expect(events.indexOf(events.find((event) => event.type === 'run.files_changed')!)).toBeGreaterThan(completedAt);
    expect(steps()).toEqual(['prepare', 'baseline', 'changedSince', 'diff']);
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.workspaceStatus?.changedFiles).toBe(2);
    expect(snapshot.lastRun).toMatchObject({ runId, outcome: 'succeeded' });
  });

  it('lists at most 1,000 changed files of a run, and says there were more', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree() });
    acquirer.setChanges({ run: Array.from({ length: 1001 }, (_, index) => changed(`file-${index}.txt`)) });
    await turn(sessionId);
    const filesChanged = await waitForEvent(runtime, sessionId, 'run.files_changed');
    expect(filesChanged.files).toHaveLength(1000);
    expect(filesChanged.truncated).toBe(true);
  });

  it('notes a diagnostic, never a failed run, when the changes cannot be read or no baseline taken', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree() });
    acquirer.failNext('changedSince', new AgentError({ code: 'internal_error', message: 'git failed' }));
    const first = await turn(sessionId);
    const unreadable = await waitForEvent(runtime, sessionId, 'diagnostic');
    expect(unreadable).toMatchObject({ runId: first, code: 'workspace.changes_unreadable' });
    acquirer.failNext('baseline', new AgentError({ code: 'internal_error', message: 'git failed' }));
    const second = await turn(sessionId);
    const noBaseline = await waitForEvent(runtime, sessionId, 'diagnostic', { afterSeq: unreadable.seq });
    expect(noBaseline).toMatchObject({ runId: second, code: 'workspace.baseline_failed' });
    expect((await runtime.getRun(first)).outcome).toBe('succeeded');
    expect((await runtime.getRun(second)).outcome).toBe('succeeded');
    expect(types(await runtime.readEvents(sessionId))).not.toContain('run.files_changed');
    expect(unreadable.level).toBe('warning');

    // Stopped by the host's shutdown, git did not fail: a note, not a warning a person is shown.
    acquirer.failNext(
      'changedSince',
      new AgentError({ code: 'runtime_stopped', message: 'Tether is shutting down (fake).' }),
    );
    const third = await turn(sessionId);
    const stopped = await waitForEvent(runtime, sessionId, 'diagnostic', { afterSeq: noBaseline.seq });
    expect(stopped).toMatchObject({ runId: third, code: 'workspace.changes_unreadable', level: 'info' });
  });

  it('is released at close once the agent has stopped: removed with no work, kept with it', async () => {
    const clean = await runtime.openSession({ workspace: worktree() });
    const kept = await runtime.openSession({ workspace: worktree() });
    await turn(clean.sessionId);
    await turn(kept.sessionId);
    const cleanDirectory = (await runtime.getSession(clean.sessionId)).workspaceStatus!.directory;
    const keptDirectory = (await runtime.getSession(kept.sessionId)).workspaceStatus!.directory;
    acquirer.setWork(keptDirectory, 'commits_beyond_base');
    const release = acquirer.release.bind(acquirer);
    const stopsAtRelease: string[][] = [];
    acquirer.release = (prepared, options) => {
      stopsAtRelease.push(provider.sessions.flatMap((session) => session.stops));
      return release(prepared, options);
    };

    await runtime.closeSession({ sessionId: clean.sessionId });
    expect(stopsAtRelease).toEqual([['close']]);
    expect(types(await runtime.readEvents(clean.sessionId)).slice(-2)).toEqual([
      'session.closed',
      'session.workspace_released',
    ]);
    expect((await runtime.getSession(clean.sessionId)).workspaceStatus).toMatchObject({
      state: 'removed',
      keptBecause: null,
    });
    expect(existsSync(cleanDirectory)).toBe(false);

    await runtime.closeSession({ sessionId: kept.sessionId });
    const released = await waitForEvent(runtime, kept.sessionId, 'session.workspace_released');
    expect(released.workspace).toMatchObject({
      state: 'kept',
      keptBecause: 'commits_beyond_base',
      worktree: { path: keptDirectory },
    });
    expect(existsSync(keptDirectory)).toBe(true);
    expect(acquirer.calls.filter((call) => call.step === 'release').map((call) => call.release)).toEqual([
      { discardChanges: false, inUse: false },
      { discardChanges: false, inUse: false },
    ]);
  });

  it('is shared by a fork, and kept while the other session is open', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree() });
    await turn(sessionId);
    const { forkSessionId } = await runtime.forkSession({ sessionId });
    const source = await runtime.getSession(sessionId);
    const fork = await runtime.getSession(forkSessionId);
    expect(fork.workspaceStatus).toEqual(source.workspaceStatus);
    expect(types(await runtime.readEvents(forkSessionId))).toEqual(['session.opened', 'session.workspace_ready']);

    await runtime.closeSession({ sessionId });
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject({
      state: 'kept',
      keptBecause: 'in_use',
    });
    expect(existsSync(source.workspaceStatus!.directory)).toBe(true);
    await runtime.closeSession({ sessionId: forkSessionId });
    expect((await runtime.getSession(forkSessionId)).workspaceStatus?.state).toBe('removed');
    expect(acquirer.calls.filter((call) => call.step === 'release').map((call) => call.release?.inUse)).toEqual([
      true,
      false,
    ]);
    // The source, closed first, no longer says it is kept for the fork: it is gone for both.
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject({
      state: 'removed',
      keptBecause: null,
    });
    expect(types(await runtime.readEvents(sessionId)).filter((type) => type === 'session.workspace_released')).toEqual([
      'session.workspace_released',
      'session.workspace_released',
    ]);
  });

  it('stays with a closed session that still holds it when a fork sharing it is deleted, even told to discard', async () => {
    const { sessionId, forkSessionId, directory } = await closedWithAForkAndWork('feature/shared');
    const kept = { directory, state: 'kept', keptBecause: 'uncommitted_changes' };
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject(kept);

    // The work is the source's too: deleting the fork, told to discard or not, leaves it to the source.
    expect(await runtime.deleteSession(forkSessionId, { discardWorkspaceChanges: true })).toMatchObject({
      sessionId: forkSessionId,
      workspaceStatus: { ...kept, keptBecause: 'in_use' },
    });
    expect(existsSync(directory)).toBe(true);
    expect(acquirer.calls.at(-1)?.release).toEqual({ discardChanges: true, forDelete: true, inUse: true });
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject(kept);

    // The last session holding it decides as any other.
    const refusal = await agentErrorOf(runtime.deleteSession(sessionId));
    expect(refusal.code).toBe('workspace_has_changes');
    await runtime.deleteSession(sessionId, { discardWorkspaceChanges: true });
    expect(existsSync(directory)).toBe(false);
  });

  it('deleted together with the fork sharing it, goes with the last of them: never left to a session deleted beside it', async () => {
    const { sessionId, forkSessionId, directory } = await closedWithAForkAndWork('feature/both');

    await Promise.all([
      runtime.deleteSession(sessionId, { discardWorkspaceChanges: true }),
      runtime.deleteSession(forkSessionId, { discardWorkspaceChanges: true }),
    ]);
    expect(existsSync(directory)).toBe(false);
    expect(acquirer.calls.slice(-2).map((call) => call.release?.inUse)).toEqual([true, false]);
  });

  it('stays with a fork that still holds it when its closed source is deleted, the fork no longer in memory', async () => {
    await runtime.shutdown();
    runtime = await harness.start({ providers: [provider], workspaces: [acquirer], closedSessionCacheSize: 0 });
    const { sessionId } = await runtime.openSession({ workspace: worktree('feature/source') });
    await turn(sessionId);
    const directory = (await runtime.getSession(sessionId)).workspaceStatus!.directory;
    const { forkSessionId } = await runtime.forkSession({ sessionId });
    acquirer.setWork(directory, 'commits_beyond_base');
    await runtime.closeSession({ sessionId: forkSessionId });
    await runtime.closeSession({ sessionId });

    await runtime.deleteSession(sessionId);
    expect(existsSync(directory)).toBe(true);
    expect((await runtime.getSession(forkSessionId)).workspaceStatus).toMatchObject({
      directory,
      state: 'kept',
      keptBecause: 'commits_beyond_base',
    });
  });

  it('refuses to be deleted with work in it unless told to discard it, then removes it', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree('feature/keep') });
    const directory = (await runtime.getSession(sessionId)).workspaceStatus!.directory;
    acquirer.setWork(directory, 'uncommitted_changes');
    await runtime.closeSession({ sessionId });

    const refusal = await agentErrorOf(runtime.deleteSession(sessionId));
    expect(refusal.code).toBe('workspace_has_changes');
    expect(refusal.details?.reason).toBe('uncommitted_changes');
    expect(refusal.message).toContain(directory);
    expect(refusal.message).toContain('feature/keep');
    expect(refusal.message).toContain('discardWorkspaceChanges');
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
    });
    expect(existsSync(directory)).toBe(true);

    expect(await runtime.deleteSession(sessionId, { discardWorkspaceChanges: true })).toMatchObject({
      workspaceStatus: { state: 'removed' },
    });
    expect(acquirer.calls.at(-1)?.release).toEqual({ discardChanges: true, forDelete: true, inUse: false });
    expect(existsSync(directory)).toBe(false);
    expect((await agentErrorOf(runtime.getSession(sessionId))).code).toBe('session_not_found');
  });

  it('refuses a delete whose release fails, even when told to discard: the session still names its worktree', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree('feature/stuck') });
    const directory = (await runtime.getSession(sessionId)).workspaceStatus!.directory;
    acquirer.setWork(directory, 'uncommitted_changes');
    await runtime.closeSession({ sessionId });
    acquirer.failNext('release');

    const refusal = await agentErrorOf(runtime.deleteSession(sessionId, { discardWorkspaceChanges: true }));
    expect(refusal.code).toBe('invalid_workspace');
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject({ directory, state: 'kept' });
    await runtime.deleteSession(sessionId, { discardWorkspaceChanges: true });
    expect(existsSync(directory)).toBe(false);
  });

  it('is made again when a closed session whose workspace was removed is reopened; a failure leaves it closed', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree() });
    await turn(sessionId);
    await runtime.closeSession({ sessionId });
    const directory = (await runtime.getSession(sessionId)).workspaceStatus!.directory;
    expect(existsSync(directory)).toBe(false);

    const cannot = new AgentError({
      code: 'invalid_workspace',
      message: 'The repository is gone.',
      details: { reason: 'not_a_git_repository' },
    });
    acquirer.failNext('restore', cannot);
    expect((await agentErrorOf(runtime.openSession({ continueSession: sessionId }))).message).toBe(
      'The repository is gone.',
    );
    expect((await runtime.getSession(sessionId)).state).toBe('closed');

    await runtime.openSession({ continueSession: sessionId });
    expect(existsSync(directory)).toBe(true);
    expect(types(await runtime.readEvents(sessionId)).slice(-2)).toEqual(['session.opened', 'session.workspace_ready']);
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject({ state: 'ready', directory });
    await turn(sessionId, 'again');
    expect(provider.sessions.at(-1)!.options.workspace.path).toBe(directory);
  });

  it('answers the session diff through its acquirer, and an empty one once its worktree was removed', async () => {
    const { sessionId } = await runtime.openSession({ workspace: worktree('feature/diff') });
    acquirer.setChanges({ session: [changed('a.txt'), changed('b.txt')] });
    const diff = await runtime.getSessionDiff(sessionId, { maxBytes: 20 });
    expect(diff).toMatchObject({ sessionId, branch: 'feature/diff', truncated: true });
    expect(diff.files.map((file) => file.path)).toEqual(['a.txt', 'b.txt']);
    expect(diff.diff).toHaveLength(20);
    expect((await agentErrorOf(runtime.getSessionDiff(sessionId, { maxBytes: 0 }))).code).toBe('invalid_command');

    acquirer.setChanges({ session: [] });
    await runtime.closeSession({ sessionId });
    const diffCalls = steps().filter((step) => step === 'diff').length;
    expect(await runtime.getSessionDiff(sessionId)).toEqual({
      sessionId,
      baseCommit: '0'.repeat(40),
      branch: 'feature/diff',
      files: [],
      diff: '',
      truncated: false,
    });
    expect(steps().filter((step) => step === 'diff')).toHaveLength(diffCalls);
  });
});

describe('a session in a plain directory', () => {
  it('works as before: no workspace events, no baseline, no changed files, and no diff', async () => {
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: harness.workspace } });
    await turn(sessionId);
    await runtime.closeSession({ sessionId });
    expect(types(await runtime.readEvents(sessionId))).toEqual([
      'session.opened',
      'run.started',
      'session.provider_session_changed',
      'run.message_delta',
      'run.checkpointed',
      'run.completed',
      'session.closed',
    ]);
    expect(acquirer.calls).toEqual([]);
    expect((await runtime.getSession(sessionId)).workspaceStatus).toEqual({
      kind: 'directory',
      directory: harness.workspace,
      worktree: null,
      state: 'kept',
      keptBecause: null,
      changedFiles: null,
    });
    const error = await agentErrorOf(runtime.getSessionDiff(sessionId));
    expect(error.code).toBe('capability_unsupported');
    expect(error.details?.reason).toBe('workspace_diff');
    await runtime.deleteSession(sessionId);
    expect(existsSync(harness.workspace)).toBe(true);
  });
});
