import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AgentProviderV1, AgentProviderV1StopOptions } from '@tether/provider-spec';
import { type MockTurnContext, agentErrorOf, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';
import { handleShutdownSignals } from './shutdown-signals.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-shutdown-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/**
 * A runtime with one session whose run stays active until the provider ends it. `applyStop`: the
 * agent ends the run when asked to stop (as a healthy CLI does); otherwise it ignores the request.
 */
async function runtimeWithActiveRun(applyStop: boolean) {
  let started!: (turn: MockTurnContext) => void;
  const turnStarted = new Promise<MockTurnContext>((resolve) => (started = resolve));
  const stops: AgentProviderV1StopOptions[] = [];
  const provider = createMockProvider({
    turn: (context) => started(context),
    interrupt: (runId, session) => {
      if (applyStop) session.emit({ type: 'run.completed', runId, outcome: 'interrupted' });
      else return new Promise(() => {});
    },
    stop: (_reason, _session, options) => void stops.push(options),
  });
  const runtime = await createAgentRuntime({ providers: [provider] });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'work' }] });
  await turnStarted;
  return { runtime, provider, sessionId, runId, stops };
}

describe('runtime.shutdown options', () => {
  it('with a grace: asks the run to stop, lets the agent end it, then force-stops the process', async () => {
    const { runtime, provider, runId, stops } = await runtimeWithActiveRun(true);
    const completed = runtime.waitForRun(runId);
    await runtime.shutdown({ graceMs: 5_000, force: true });
    expect(provider.sessions[0]!.interrupts).toEqual([runId]);
    // Ended by the agent's own stop (the one the shutdown asked for, so its end says runtime_stopped), not by the runtime giving up on it.
    const stopped = await completed;
    expect(stopped).toMatchObject({
      status: 'completed',
      outcome: 'interrupted',
      error: { code: 'runtime_stopped' },
    });
    expect(stopped.error?.details).toBeUndefined();
    expect(stops).toEqual([{ force: true }]);
    expect((await agentErrorOf(runtime.openSession({ workspace: { kind: 'directory', path: workspace } }))).code).toBe(
      'runtime_stopped',
    );
  });

  it('a run that does not settle within the grace is recorded interrupted (runtime_stopped); a second call can cut the grace short', async () => {
    const { runtime, runId, stops } = await runtimeWithActiveRun(false);
    const completed = runtime.waitForRun(runId);
    // An hour of grace: only the second call lets this test finish.
    const first = runtime.shutdown({ graceMs: 3_600_000 });
    await runtime.shutdown({ graceMs: 0, force: true });
    await first;
    // Ended by the shutdown, not by the agent: its end says the unfinished answer is not the agent's.
    expect(await completed).toMatchObject({
      outcome: 'interrupted',
      error: { code: 'runtime_stopped', details: { reason: 'cut_off' } },
    });
    expect(stops).toEqual([{ force: true }]);
  });

  it('without options it does what it always did: no stop request, the run recorded interrupted at once, a graceful stop', async () => {
    const { runtime, provider, runId, stops } = await runtimeWithActiveRun(true);
    const completed = runtime.waitForRun(runId);
    await runtime.shutdown();
    expect(provider.sessions[0]!.interrupts).toEqual([]);
    expect(await completed).toMatchObject({
      outcome: 'interrupted',
      error: { code: 'runtime_stopped', details: { reason: 'cut_off' } },
    });
    expect(stops).toEqual([{ force: false }]);
  });

  it("passes a forced stop on to the provider's dispose (its spares are killed, not asked to stop); a plain shutdown disposes gracefully", async () => {
    for (const force of [true, false]) {
      const disposals: (AgentProviderV1StopOptions | undefined)[] = [];
      const provider: AgentProviderV1 = {
        ...createMockProvider(),
        doDispose: async (options) => void disposals.push(options),
      };
      const runtime = await createAgentRuntime({ providers: [provider] });
      await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
      await runtime.shutdown(force ? { force } : {});
      expect(disposals).toEqual([{ force }]);
    }
  });
});

describe('handleShutdownSignals', () => {
  it('shuts the runtime down on SIGTERM, reports 143, and its disposer removes the handlers', async () => {
    const { runtime, runId } = await runtimeWithActiveRun(true);
    const completed = runtime.waitForRun(runId);
    const before = process.listenerCount('SIGTERM');
    let exited!: (code: number) => void;
    const exitCode = new Promise<number>((resolve) => (exited = resolve));
    const dispose = handleShutdownSignals(runtime, { onShutdown: (code) => exited(code) });
    expect(process.listenerCount('SIGTERM')).toBe(before + 1);
    process.emit('SIGTERM');
    expect(await exitCode).toBe(143);
    expect(await completed).toMatchObject({ outcome: 'interrupted', error: { code: 'runtime_stopped' } });
    dispose();
    expect(process.listenerCount('SIGTERM')).toBe(before);
  });
});
