import { holdReply, textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { agentErrorOf, answerText, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, runSequence, turnRequests } from './conformance-harness.js';

async function control(
  runtime: AgentRuntime,
  sessionId: string,
  name: string,
  argument?: string,
): Promise<{ runId: string; events: ProtocolEvent[] }> {
  const { runId } = await runtime.dispatch({
    type: 'run_control',
    commandId: `control-${name}-${Math.random()}`,
    sessionId,
    name,
    ...(argument ? { argument } : {}),
  });
  return { runId, events: await runEvents(runtime, sessionId, runId) };
}

function completedControl(events: ProtocolEvent[]) {
  return events.find(
    (event): event is Extract<ProtocolEvent, { type: 'control.completed' }> => event.type === 'control.completed',
  );
}

describeTransports('controls (slash commands and typed controls)', ({ transport, start }) => {
  async function sessionWithOneTurn() {
    const environment = await start();
    environment.api.setResponder(() => textReply('Fake model reply.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember GUAVA.' }] })).runId,
    );
    return { environment, runtime, sessionId };
  }

  it('cost and context: local controls with their output, no model call', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    const before = turnRequests(environment).length;
    const cost = await control(runtime, sessionId, 'cost');
    // The CLI answers /cost with an assistant frame of its own: its text arrives as the run's answer too.
    expect(runSequence(cost.events, cost.runId)).toEqual([
      'run.started:cost',
      'run.message_delta…',
      'control.completed:cost:succeeded',
      'run.completed:succeeded',
    ]);
    expect(completedControl(cost.events)?.output).toContain('Estimated cost');
    const context = await control(runtime, sessionId, 'context');
    expect(runSequence(context.events, context.runId)).toEqual([
      'run.started:context',
      'run.message_delta…',
      'control.completed:context:succeeded',
      'run.completed:succeeded',
    ]);
    expect(completedControl(context.events)?.output).toContain('Context Usage');
    expect(turnRequests(environment).length).toBe(before);
  });

  it('compact with instructions: the agent compacts through the model, says so, and the next turn works', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    const { runId, events } = await control(runtime, sessionId, 'compact', 'keep only the fruit');
    expect(runSequence(events, runId)).toEqual([
      'run.started:compact',
      'context.compacted',
      'run.usage',
      // After the summary: a copy of the conversation made later is cut there.
      'run.checkpointed',
      'control.completed:compact:succeeded',
      'run.completed:succeeded',
    ]);
    const compacted = events.find((event) => event.type === 'context.compacted');
    expect(compacted).toMatchObject({ runId, trigger: 'requested' });
    expect(compacted?.type === 'context.compacted' && compacted.tokensBefore).toBeGreaterThan(0);
    expect(environment.api.requests.some((request) => request.kind === 'compaction')).toBe(true);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Still there?' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Fake model reply.');
  });

  it('clear: context.cleared, the new conversation id is followed (a checkpoint of it, empty), and history is gone', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    const before = (await runtime.getSession(sessionId)).providerSessionId;
    const { runId, events } = await control(runtime, sessionId, 'clear');
    expect(runSequence(events, runId)).toEqual([
      'run.started:clear',
      'context.cleared',
      'run.checkpointed',
      'control.completed:clear:succeeded',
      'run.completed:succeeded',
    ]);
    const after = (await runtime.getSession(sessionId)).providerSessionId;
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
    expect(events.find((event) => event.type === 'run.checkpointed')).toMatchObject({
      providerSessionId: after,
      inputMessageId: null,
      lastMessageId: null,
    });
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'What fruit?' }] });
    await runEvents(runtime, sessionId, next.runId);
    expect(JSON.stringify((turnRequests(environment).at(-1)!.body as { messages: unknown }).messages)).not.toContain(
      'GUAVA',
    );
  });

  it('model: switches for the session as set_model does: shown resolved at once, and kept by its next process', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Fake model reply.'));
    const runtime = await environment.runtime();
    const workspace = { kind: 'directory' as const, path: environment.workspace };
    const { sessionId } = await runtime.openSession({ workspace, model: 'opus' });
    const turn = async () =>
      runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    await turn();
    const { events } = await control(runtime, sessionId, 'model', 'sonnet');
    expect(completedControl(events)).toMatchObject({ status: 'succeeded', output: 'Set model to claude-sonnet-5-5.' });
    expect(await runtime.getSession(sessionId)).toMatchObject({
      model: 'claude-sonnet-5-5',
      configuration: { model: 'claude-sonnet-5-5' },
    });
    await turn();
    expect((turnRequests(environment).at(-1)!.body as { model: string }).model).toBe('claude-sonnet-5-5');
    // A new process for the session (closed, then continued) launches with it, not with the model it was opened with.
    await runtime.closeSession({ sessionId });
    await runtime.openSession({ continueSession: sessionId });
    await turn();
    expect((turnRequests(environment).at(-1)!.body as { model: string }).model).toBe('claude-sonnet-5-5');
    // The model the agent runs already, chosen by the host: kept as the session's own from now on.
    const plain = await runtime.openSession({ workspace });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId: plain.sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId,
    );
    const running = (await runtime.getSession(plain.sessionId)).model!;
    await control(runtime, plain.sessionId, 'model', running);
    expect((await runtime.getSession(plain.sessionId)).configuration).toMatchObject({ model: running });
  });

  it('review, security-review, init and pr-comments reach the agent as model turns and end', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    for (const name of ['review', 'security-review', 'init', 'pr-comments']) {
      const before = turnRequests(environment).length;
      const { events } = await control(runtime, sessionId, name);
      expect(completedControl(events), name).toMatchObject({ name, status: 'succeeded' });
      expect(events.at(-1), name).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
      expect(turnRequests(environment).length, name).toBeGreaterThan(before);
    }
  });

  it('a steer into a running control is refused up front (run_active), nothing queued; after_turn waits for it', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    const before = turnRequests(environment).length;
    environment.api.enqueue(holdReply());
    const { runId } = await runtime.dispatch({
      type: 'run_control',
      commandId: 'held-review',
      sessionId,
      name: 'review',
    });
    await environment.api.waitForRequests(before + 1, { kind: 'turn' });
    const refused = await agentErrorOf(
      runtime.submitTurn({ sessionId, delivery: 'steer', input: [{ type: 'text', text: 'Also check the tests.' }] }),
    );
    expect(refused).toMatchObject({ code: 'run_active', details: { reason: 'control_active' } });
    expect(refused.message).toContain('after_turn');
    expect((await runtime.getSession(sessionId)).queuedInputs ?? []).toEqual([]);
    const next = await runtime.submitTurn({
      sessionId,
      delivery: 'after_turn',
      input: [{ type: 'text', text: 'Then check the tests.' }],
    });
    environment.api.releaseHeld();
    expect(await runtime.waitForRun(runId)).toMatchObject({ runId });
    expect(await runtime.waitForRun(next.runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it('an unknown control never reaches the agent: it completes at once as unsupported; a malformed one is invalid', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    const requestsBefore = environment.api.requests.length;
    const { runId, events } = await control(runtime, sessionId, 'frobnicate');
    expect(runSequence(events, runId)).toEqual([
      'run.started:frobnicate',
      'control.completed:frobnicate:unsupported',
      'run.completed:failed:capability_unsupported',
    ]);
    expect(environment.api.requests.length).toBe(requestsBefore);
    const malformed = await agentErrorOf(
      runtime.dispatch({ type: 'run_control', commandId: 'bad', sessionId, name: '/cost' }),
    );
    expect(malformed.code).toBe('invalid_command');
  });

  it('set_model live (alias resolved) and get_context_usage as numbers', async () => {
    const { runtime, sessionId } = await sessionWithOneTurn();
    const model = await runtime.dispatch({ type: 'set_model', commandId: 'model-1', sessionId, model: 'sonnet' });
    expect(model.model).toBe('claude-sonnet-5-5');
    expect((await runtime.getSession(sessionId)).model).toBe('claude-sonnet-5-5');
    const context = await runtime.dispatch({ type: 'get_context_usage', commandId: 'context-1', sessionId });
    expect(context.usage.totalTokens).toBeGreaterThan(0);
    expect(context.usage.maxTokens).toBeGreaterThan(context.usage.totalTokens);
    expect(context.usage.categories.length).toBeGreaterThan(0);
  });

  it('set_model while the agent starts on the first turn: the session shows and keeps the model set, not the one that turn was taken in on', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Fake model reply.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'One.' }] });
    // The agent has the turn's input from its spawn on: the change reaches it after, and is answered first.
    await waitForEvent(runtime, sessionId, 'session.process_started');
    const set = await runtime.dispatch({ type: 'set_model', commandId: 'model-haiku', sessionId, model: 'haiku' });
    await runtime.waitForRun(runId);
    const changes = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'session.model_changed');
    expect(changes.at(-1)).toMatchObject({ model: set.model, source: 'command' });
    const snapshot = await runtime.getSession(sessionId);
    expect([snapshot.model, snapshot.configuration.model]).toEqual([set.model, set.model]);
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Two.' }] })).runId);
    expect((turnRequests(environment).at(-1)!.body as { model: string }).model).toBe(set.model);
  });

  it('set_model live to an alias the agent may answer as given: the session shows the model its next turn ran on', async () => {
    const { environment, runtime, sessionId } = await sessionWithOneTurn();
    await runtime.dispatch({ type: 'set_model', commandId: 'model-best', sessionId, model: 'best' });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'And now?' }] })).runId,
    );
    const ranOn = (turnRequests(environment).at(-1)!.body as { model: string }).model;
    expect(ranOn).toMatch(/^claude-/);
    expect((await runtime.getSession(sessionId)).model).toBe(ranOn);
  });

  it(
    transport === 'cli'
      ? "get_session_cost: the agent's cost report and Tether's total"
      : "get_session_cost: capability_unsupported (the SDK's Query has no cost request), declared in the capabilities",
    async () => {
      const { runtime, sessionId } = await sessionWithOneTurn();
      const [provider] = runtime.providers;
      if (transport === 'cli') {
        expect(provider?.capabilities.sessionCost).toBe(true);
        const cost = await runtime.dispatch({ type: 'get_session_cost', commandId: 'cost-1', sessionId });
        expect(cost.report).toContain('Estimated cost');
        expect(cost.costUsd).toBeGreaterThan(0);
      } else {
        expect(provider?.capabilities.sessionCost).toBe(false);
        const refused = await agentErrorOf(
          runtime.dispatch({ type: 'get_session_cost', commandId: 'cost-1', sessionId }),
        );
        expect(refused).toMatchObject({ code: 'capability_unsupported', details: { reason: 'session_cost' } });
        // The /cost control is a user line, which the SDK carries like any other.
        expect(completedControl((await control(runtime, sessionId, 'cost')).events)?.output).toContain(
          'Estimated cost',
        );
      }
    },
  );
});
