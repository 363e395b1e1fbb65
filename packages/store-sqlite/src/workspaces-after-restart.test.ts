import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import {
  type FakeWorkspaceAcquirer,
  createFakeWorkspaceAcquirer,
  createMockProvider,
  replyWith,
  waitForEvent,
} from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { openSqliteStore } from './index.js';

let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>>;
let dataDir: string;
let repository: string;
let acquirer: FakeWorkspaceAcquirer;
const running: AgentRuntime[] = [];
beforeEach(async () => {
  directory = await makeTemporaryDirectory();
  dataDir = path.join(directory.path, 'data');
  repository = path.join(directory.path, 'repository');
  await mkdir(repository);
  acquirer = createFakeWorkspaceAcquirer({ root: path.join(directory.path, 'worktrees') });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((runtime) => runtime.shutdown()));
  await directory.remove();
});

async function startRuntime(): Promise<AgentRuntime> {
  const runtime = await createAgentRuntime({
    providers: [createMockProvider({ turn: replyWith('done') })],
    store: await openSqliteStore({ dataDir }),
    workspaces: [acquirer],
  });
  running.push(runtime);
  return runtime;
}

async function restart(runtime: AgentRuntime): Promise<AgentRuntime> {
  await runtime.shutdown();
  running.splice(running.indexOf(runtime), 1);
  return startRuntime();
}

describe('worktree sessions over SQLite across a restart', () => {
  it('keep their workspace status, and an open one whose folder went missing is restored at start-up', async () => {
    let runtime = await startRuntime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'git_worktree', repository } });
    const before = (await runtime.getSession(sessionId)).workspaceStatus!;
    await rm(before.directory, { recursive: true });

    runtime = await restart(runtime);
    expect(acquirer.calls.filter((call) => call.step === 'restore')).toEqual([
      { step: 'restore', subject: before.directory },
    ]);
    expect(existsSync(before.directory)).toBe(true);
    const after = await runtime.getSession(sessionId);
    expect(after).toMatchObject({ state: 'idle', workspaceStatus: before });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go on' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
  });

  it('leave an open session whose workspace cannot be restored open, with a diagnostic saying so', async () => {
    let runtime = await startRuntime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'git_worktree', repository } });
    const lastSeq = (await runtime.getSession(sessionId)).lastSeq;
    acquirer.failNext('restore', new AgentError({ code: 'invalid_workspace', message: 'The repository is gone.' }));

    runtime = await restart(runtime);
    const diagnostic = await waitForEvent(runtime, sessionId, 'diagnostic', { afterSeq: lastSeq });
    expect(diagnostic).toMatchObject({ level: 'error', code: 'workspace.restore_failed' });
    expect((await runtime.getSession(sessionId)).state).toBe('idle');
  });

  it('keep a closed session kept with its work refusable for delete after a restart', async () => {
    let runtime = await startRuntime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'git_worktree', repository } });
    const { directory: folder } = (await runtime.getSession(sessionId)).workspaceStatus!;
    acquirer.setWork(folder, 'uncommitted_changes');
    await runtime.closeSession({ sessionId });

    runtime = await restart(runtime);
    expect((await runtime.getSession(sessionId)).workspaceStatus).toMatchObject({
      state: 'kept',
      keptBecause: 'uncommitted_changes',
    });
    await expect(runtime.deleteSession(sessionId)).rejects.toMatchObject({ code: 'workspace_has_changes' });
    await runtime.deleteSession(sessionId, { discardWorkspaceChanges: true });
    expect(existsSync(folder)).toBe(false);
  });
});
