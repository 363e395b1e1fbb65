import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PermissionMode } from '@tether/protocol';
import { type MockProviderSession, type MockTurnContext, agentErrorOf, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-restart-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/**
 * A provider shaped like Claude's: its agent starts with the first turn (reported by
 * session.process_started), and a running agent cannot enter bypass live.
 */
function agentProvider(options: { hold?: (context: MockTurnContext) => void } = {}) {
  const running = (session: MockProviderSession) => session.turns.length > 0 && session.stops.length === 0;
  return createMockProvider({
    requiresRestartFor: (mode: PermissionMode, session) => mode === 'bypass' && running(session),
    turn: (context) => {
      if (context.session.turns.length === 1)
        context.emit({ type: 'session.process_started', pid: 4242, startTime: null, marker: 'mock' });
      if (options.hold) return options.hold(context);
      context.emit({ type: 'run.completed', runId: context.runId, outcome: 'succeeded' });
    },
  });
}

describe('modes that need the agent restarted', () => {
  it('the snapshot lists them as the agent starts and stops; set_permission_mode refuses them, or restarts into them when asked', async () => {
    const provider = agentProvider();
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    // No agent yet: any mode applies from its launch.
    expect((await runtime.getSession(sessionId)).modesRequiringRestart).toEqual([]);

    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'hi' }] })).runId);
    expect((await runtime.getSession(sessionId)).modesRequiringRestart).toEqual(['bypass']);
    expect((await runtime.listSessions())[0]!.modesRequiringRestart).toEqual(['bypass']);

    const refused = await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'bypass' }));
    expect(refused.code).toBe('requires_restart');
    expect(refused.message).toContain('restart: true');
    expect(await runtime.getSession(sessionId)).toMatchObject({
      permissionMode: null,
      modesRequiringRestart: ['bypass'],
    });

    const receipt = await runtime.setPermissionMode({ sessionId, mode: 'bypass', restart: true });
    expect(receipt.mode).toBe('bypass');
    expect(provider.sessions[0]!.stops).toEqual(['release']);
    expect(provider.sessions[1]!.modes).toEqual(['bypass']);
    const tail = (await runtime.readEvents(sessionId)).slice(-2);
    expect(tail).toMatchObject([
      { type: 'session.process_stopped', reason: 'released' },
      { type: 'session.mode_changed', mode: 'bypass', source: 'command' },
    ]);
    expect(await runtime.getSession(sessionId)).toMatchObject({
      permissionMode: 'bypass',
      modesRequiringRestart: [],
      configuration: { permissionMode: 'bypass' },
    });

    // The next turn starts the agent again (resuming the conversation) in the new mode.
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect((await runtime.waitForRun(next.runId)).outcome).toBe('succeeded');
    expect(provider.sessions).toHaveLength(2);
    expect(provider.sessions[1]!.turns.map((turn) => turn.runId)).toEqual([next.runId]);

    await runtime.closeSession({ sessionId });
    expect((await runtime.getSession(sessionId)).modesRequiringRestart).toEqual([]);
    await runtime.shutdown();
  });

  it('a mode the agent can enter live is set without a restart, even when restart is asked', async () => {
    const provider = agentProvider();
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'hi' }] })).runId);
    expect((await runtime.setPermissionMode({ sessionId, mode: 'plan', restart: true })).mode).toBe('plan');
    expect(provider.sessions[0]!.stops).toEqual([]);
    expect(provider.sessions[0]!.modes).toEqual(['plan']);
    await runtime.shutdown();
  });

  it('refuses to restart while a run is active (run_active), changing nothing', async () => {
    let hold: (context: MockTurnContext) => void = () => {};
    const held = new Promise<MockTurnContext>((resolve) => (hold = resolve));
    const provider = agentProvider({ hold: (context) => hold(context) });
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'hi' }] });
    const turn = await held;
    const refused = await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'bypass', restart: true }));
    expect(refused.code).toBe('run_active');
    expect(provider.sessions[0]!.stops).toEqual([]);
    expect(await runtime.getSession(sessionId)).toMatchObject({
      state: 'running',
      permissionMode: null,
      modesRequiringRestart: ['bypass'],
    });
    turn.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    await runtime.waitForRun(runId);
    await runtime.shutdown();
  });

  it('says so when even a new agent could not enter the mode', async () => {
    const provider = createMockProvider({ requiresRestartFor: (mode) => mode === 'bypass' });
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const refused = await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'bypass', restart: true }));
    expect(refused.code).toBe('requires_restart');
    expect(refused.message).toContain('new session');
    expect((await runtime.getSession(sessionId)).permissionMode).toBeNull();
    await runtime.shutdown();
  });
});
