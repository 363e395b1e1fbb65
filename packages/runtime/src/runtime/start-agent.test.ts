import type { ProtocolEvent } from '@tether/protocol';
import { AgentError } from '@tether/protocol';
import { type MockProvider, createMockProvider } from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const harness = runtimePerTest('tether-start-agent-');

/** A runtime over `provider`, what it publishes, and a session opened with startAgent. */
async function openStartingAgent(provider: MockProvider) {
  const runtime = await harness.start({ providers: [provider] });
  const published: ProtocolEvent[] = [];
  runtime.observe((event) => published.push(event));
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: harness.workspace },
    startAgent: true,
  });
  return { runtime, published, sessionId };
}

describe('open_session with startAgent', () => {
  it("starts the session's agent once its opening is recorded, without the receipt waiting for it", async () => {
    let finishStart!: () => void;
    const provider = createMockProvider({
      start: () =>
        new Promise<void>((resolve) => {
          finishStart = resolve;
        }),
    });
    const runtime = await harness.start({ providers: [provider] });
    // The receipt comes while the start is still under way.
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: harness.workspace },
      startAgent: true,
    });
    await vi.waitFor(() => expect(provider.sessions[0]?.starts).toBe(1));
    const stored = await runtime.readEvents(sessionId, { afterSeq: 0 });
    expect(stored.map((event) => event.type)).toEqual(['session.opened']);
    finishStart();
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
    expect(provider.sessions[0]?.starts).toBe(1);
  });

  it('without it, opening starts nothing; reopening with it starts the agent of the reopened session', async () => {
    const provider = createMockProvider({ start: () => undefined });
    const runtime = await harness.start({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: harness.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
    await runtime.waitForRun(runId);
    expect(provider.sessions.map((session) => session.starts)).toEqual([0]);
    await runtime.closeSession({ sessionId });
    await runtime.openSession({ continueSession: sessionId, startAgent: true });
    await vi.waitFor(() => expect(provider.sessions.map((session) => session.starts)).toEqual([0, 1]));
  });

  it('a start that fails is a warning diagnostic; the session stays open and its first turn runs', async () => {
    const provider = createMockProvider({
      start: () => {
        throw new AgentError({ code: 'provider_unavailable', message: 'The agent could not start.' });
      },
    });
    const { runtime, published, sessionId } = await openStartingAgent(provider);
    await vi.waitFor(() =>
      expect(published.filter((event) => event.type === 'diagnostic')).toEqual([
        expect.objectContaining({ sessionId, level: 'warning', code: 'agent.start_failed' }),
      ]),
    );
    expect((await runtime.getSession(sessionId)).state).toBe('idle');
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
  });

  it('a provider without doStart: startAgent changes nothing', async () => {
    const provider = createMockProvider();
    const { runtime, published, sessionId } = await openStartingAgent(provider);
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
    expect(published.filter((event) => event.type === 'diagnostic')).toEqual([]);
  });
});
