import { textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { type ClaudeTestEnvironment, agentErrorOf, answerText, createClaudeTestEnvironment, runEvents } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

async function sessionWithOneTurn() {
  environment = await createClaudeTestEnvironment();
  environment.api.setResponder(() => textReply('Fake model reply.'));
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember GUAVA.' }] })).runId);
  return { runtime, sessionId };
}

async function control(runtime: AgentRuntime, sessionId: string, name: string, argument?: string): Promise<ProtocolEvent[]> {
  const { runId } = await runtime.dispatch({ type: 'run_control', commandId: `control-${name}-${Math.random()}`, sessionId, name, ...(argument ? { argument } : {}) });
  return runEvents(runtime, sessionId, runId);
}

function completedControl(events: ProtocolEvent[]) {
  return events.find((event): event is Extract<ProtocolEvent, { type: 'control.completed' }> => event.type === 'control.completed');
}

function turnRequests() {
  return environment.api.requests.filter((request) => request.kind === 'turn');
}

describe('controls (slash commands) through the real claude binary', () => {
  it('cost and context: local controls with their output, no model call', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const before = turnRequests().length;
    const cost = await control(runtime, sessionId, 'cost');
    expect(cost[0]).toMatchObject({ type: 'run.started', control: { name: 'cost' } });
    expect(completedControl(cost)).toMatchObject({ name: 'cost', status: 'succeeded' });
    expect(completedControl(cost)?.output).toContain('Estimated cost');
    expect(cost.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const context = await control(runtime, sessionId, 'context');
    expect(completedControl(context)?.output).toContain('Context Usage');
    expect(turnRequests().length).toBe(before);
  });

  it('compact with instructions: the CLI compacts through the model and the next turn works', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const events = await control(runtime, sessionId, 'compact', 'keep only the fruit');
    expect(completedControl(events)).toMatchObject({ name: 'compact', status: 'succeeded' });
    expect(environment.api.requests.some((request) => request.kind === 'compaction')).toBe(true);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Still there?' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Fake model reply.');
  });

  it('clear: context.cleared, the new conversation id is followed, and history is gone', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const before = (await runtime.getSession(sessionId)).providerSessionId;
    const events = await control(runtime, sessionId, 'clear');
    expect(events.map((event) => event.type)).toContain('context.cleared');
    const after = (await runtime.getSession(sessionId)).providerSessionId;
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'What fruit?' }] });
    await runEvents(runtime, sessionId, next.runId);
    expect(JSON.stringify((turnRequests().at(-1)!.body as { messages: unknown }).messages)).not.toContain('GUAVA');
  });

  it('model: switches for the session; the next turn runs on it and the snapshot shows it resolved', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const events = await control(runtime, sessionId, 'model', 'sonnet');
    expect(completedControl(events)?.output).toContain('Set model to');
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    expect((turnRequests().at(-1)!.body as { model: string }).model).toBe('claude-sonnet-5-5');
    expect((await runtime.getSession(sessionId)).model).toBe('claude-sonnet-5-5');
  });

  it('review, security-review, init and pr-comments reach the CLI as model turns and end', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    for (const name of ['review', 'security-review', 'init', 'pr-comments']) {
      const before = turnRequests().length;
      const events = await control(runtime, sessionId, name);
      expect(completedControl(events), name).toMatchObject({ name, status: 'succeeded' });
      expect(events.at(-1), name).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
      expect(turnRequests().length, name).toBeGreaterThan(before);
    }
  });

  it('an unknown control never reaches the CLI: it completes at once as unsupported; a malformed one is invalid', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const requestsBefore = environment.api.requests.length;
    const events = await control(runtime, sessionId, 'frobnicate');
    expect(completedControl(events)).toMatchObject({ name: 'frobnicate', status: 'unsupported', output: '' });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'failed', error: { code: 'capability_unsupported' } });
    expect(environment.api.requests.length).toBe(requestsBefore);
    const malformed = await agentErrorOf(runtime.dispatch({ type: 'run_control', commandId: 'bad', sessionId, name: '/cost' }));
    expect(malformed.code).toBe('invalid_command');
  });
});

describe('typed control commands through the real claude binary', () => {
  it('set_model live, get_context_usage as numbers, get_session_cost', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const model = await runtime.dispatch({ type: 'set_model', commandId: 'model-1', sessionId, model: 'sonnet' });
    expect(model.model).toBe('claude-sonnet-5-5');
    expect((await runtime.getSession(sessionId)).model).toBe('claude-sonnet-5-5');

    const context = await runtime.dispatch({ type: 'get_context_usage', commandId: 'context-1', sessionId });
    expect(context.usage.totalTokens).toBeGreaterThan(0);
    expect(context.usage.maxTokens).toBeGreaterThan(context.usage.totalTokens);
    expect(context.usage.categories.length).toBeGreaterThan(0);

    const cost = await runtime.dispatch({ type: 'get_session_cost', commandId: 'cost-1', sessionId });
    expect(cost.report).toContain('Estimated cost');
    expect(cost.costUsd).toBeGreaterThan(0);
  });
});
