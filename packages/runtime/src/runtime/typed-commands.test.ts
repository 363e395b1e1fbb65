import os from 'node:os';
import { commandMethodNames, commandTypes } from '@tether/protocol';
import { agentErrorOf, createMockProvider } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';

// The mock provider never touches its workspace; it only has to exist.
const workspace = { kind: 'directory', path: os.tmpdir() } as const;

describe("the runtime's typed command methods", () => {
  it("has one for every command in the protocol's table", async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const missing = commandTypes.filter(
      (type) => typeof (runtime as unknown as Record<string, unknown>)[commandMethodNames[type]] !== 'function',
    );
    expect(missing).toEqual([]);
    await runtime.shutdown();
  });

  it('runs controls, sets the model and reads usage and cost like dispatch: a commandId generated or kept, a repeat answered alike', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()] });
    const { sessionId } = await runtime.openSession({ workspace });

    const control = await runtime.runControl({ sessionId, name: 'compact' });
    expect(control).toMatchObject({
      type: 'run_control',
      sessionId,
      commandId: expect.stringMatching(/^cmd_[0-9a-f]{32}$/),
    });
    expect(await runtime.waitForRun(control.runId)).toMatchObject({ runId: control.runId, outcome: 'succeeded' });

    const model = await runtime.setModel({ sessionId, model: 'sonnet', commandId: 'model-1' });
    expect(model).toEqual({ type: 'set_model', commandId: 'model-1', sessionId, model: 'mock-sonnet-1' });
    expect(await runtime.setModel({ sessionId, model: 'sonnet', commandId: 'model-1' })).toEqual(model);
    expect((await runtime.getContextUsage({ sessionId })).usage).toMatchObject({ totalTokens: 10, maxTokens: 100 });
    expect((await runtime.getSessionCost({ sessionId })).report).toBe('Estimated cost: $0.00');

    const refused = await agentErrorOf(runtime.setModel({ sessionId, model: '--dangerous' }));
    expect(refused.code).toBe('invalid_command');
    expect((await runtime.getSession(sessionId)).model).toBe('mock-sonnet-1');
    await runtime.shutdown();
  });
});
