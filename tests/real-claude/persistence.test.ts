import path from 'node:path';
import { rm } from 'node:fs/promises';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { AgentError } from '@tether/protocol';
import { openSqliteStore } from '@tether/store-sqlite';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnTetherRun } from '../process-supervision/spawn-tether-run.js';
import { killExitWatchOf } from '../process-supervision/supervision-helpers.js';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  // Each test SIGKILLs a tether on purpose: what it left is ended before the clean-up's check.
  await environment?.killProcessesLeft();
  await environment?.cleanup();
});

// Runtime-level restarts through the `tether` binary (default transport) and the data dir's owner.
// What a provider does across process ends and resumes runs once per transport in tests/conformance.
describe('sessions survive runtime restarts', () => {
  /** `tether run` SIGKILLed while its first turn waits on the model: the data dir it leaves. */
  async function killedDuringFirstTurn(): Promise<string> {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(holdReply());
    const child = spawnTetherRun(environment, dataDir, ['Hold this.']);
    await environment.api.waitForRequests(1, { kind: 'turn' });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    return dataDir;
  }

  it('marks a run that was active when its runtime died as failed with runtime_restarted', async () => {
    const dataDir = await killedDuringFirstTurn();
    const runtime = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const [session] = await runtime.listSessions();
    expect(session).toMatchObject({ state: 'idle', activeRunId: null });
    const completed = (await runtime.readEvents(session!.sessionId)).filter((event) => event.type === 'run.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
  });

  it('a session whose first turn died with its runtime starts its conversation anew: a transcript never written is not resumed', async () => {
    const dataDir = await killedDuringFirstTurn();
    await environment.killProcessesLeft();
    // The CLI writes its transcript behind its frames: a host that dies early may leave none.
    await rm(path.join(environment.home, '.claude', 'projects'), { recursive: true, force: true });

    const runtime = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const [session] = await runtime.listSessions();
    environment.api.enqueue(textReply('A fresh start.'));
    const next = await runtime.submitTurn({ sessionId: session!.sessionId, input: [{ type: 'text', text: 'Again.' }] });
    const run = await runtime.waitForRun(next.runId);
    expect(run.error).toBeNull();
    expect(run.outcome).toBe('succeeded');
  });

  it('an ephemeral session goes on in a runtime started after a graceful stop, its conversation started anew (its agent kept no transcript)', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.setResponder(() => textReply('Noted.'));
    const first = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const { sessionId } = await first.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      ephemeral: true,
    });
    const before = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember PEAR.' }] });
    expect(await first.waitForRun(before.runId)).toMatchObject({ outcome: 'succeeded' });
    await first.shutdown();

    const second = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const after = await second.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    // Before: resume_not_found (the id of a conversation never written was resumed).
    expect(await second.waitForRun(after.runId)).toMatchObject({ outcome: 'succeeded', error: null });
    const requests = environment.api.requests.filter((request) => request.kind === 'turn');
    expect(JSON.stringify(requests.at(-1)!.body)).not.toContain('Remember PEAR.');
  });

  it('a restarted runtime ends the claude process (and what its tools started) left by a crashed one', async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(
      toolUseReply('Bash', {
        command: 'setsid tail -f /dev/null > /dev/null 2>&1 &',
        description: 'Start a detached process',
      }),
      holdReply(),
    );
    const child = spawnTetherRun(environment, dataDir, ['--permission-mode', 'bypass', 'Start it.']);
    await environment.api.waitForRequests(2, { kind: 'turn' });
    // Killed with its exit watch (as with its whole cgroup): else the watch ends the orphans, not the restart.
    await killExitWatchOf(child.pid!);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    // The CLI waits on its held API call and the detached tool process lives on: both are orphans now.
    expect(processesWithEnvironment('HOME', environment.home).length).toBeGreaterThanOrEqual(2);

    const runtime = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    const [session] = await runtime.listSessions();
    const events = await runtime.readEvents(session!.sessionId);
    expect(events.find((event) => event.type === 'session.process_stopped')).toMatchObject({ reason: 'restarted' });
    expect(events.filter((event) => event.type === 'run.completed').at(-1)).toMatchObject({
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
  });

  it('refuses a second owner of a data dir with data_dir_in_use and the owner pid', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    const store = await openSqliteStore({ dataDir });
    try {
      const error = await openSqliteStore({ dataDir }).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(AgentError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'data_dir_in_use', details: { ownerPid: process.pid } });
    } finally {
      await store.close();
    }
  });
});
