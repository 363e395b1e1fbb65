import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { methods } from '@tether/acp/test-support';
import { pollFor } from '@tether/provider-claude/test-support';
import { waitForEvent } from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import { useAcp } from './acp-harness.js';

/** Whether any model request carried this text. */
function modelSaw(environment: { api: { requests: readonly { kind: string; body: unknown }[] } }, text: string) {
  return environment.api.requests.some(
    (request) => request.kind === 'turn' && JSON.stringify(request.body).includes(text),
  );
}

describe('ACP prompts sent while a prompt of the same session runs', () => {
  const start = useAcp();

  async function heldPrompt() {
    const started = await start();
    const { environment, pair } = started;
    environment.api.enqueue(holdReply());
    const sessionId = await pair.newSession(environment.workspace);
    const first = pair.prompt(sessionId, 'Take your time.');
    await environment.api.waitForRequests(1, { kind: 'turn' });
    // The stream is held once the fake API registered it: a release before that would miss it.
    await pollFor(() => (environment.api.heldCount === 1 ? true : undefined));
    /** Another prompt of the session: its answer's promise. */
    const prompt = (text: string) =>
      pair.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
    /** A second prompt, resolved with its answer's promise once Tether queued it. */
    const queuePrompt = async (text: string) => {
      const answered = prompt(text);
      return { answered, queued: await waitForEvent(started.runtime, sessionId, 'input.queued') };
    };
    return { ...started, sessionId, first, prompt, queuePrompt };
  }

  it('queues the second prompt as the next run: each answers when its own run ends, in order', async () => {
    const { environment, runtime, pair, sessionId, first } = await heldPrompt();
    const order: string[] = [];
    void first.then(() => order.push('first'));
    const second = pair.agent
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Then mention bananas.' }] })
      .then((response) => {
        order.push('second');
        return response;
      });
    const queued = await waitForEvent(runtime, sessionId, 'input.queued');
    expect(queued.delivery).toBe('after_turn');
    expect((await runtime.getSession(sessionId)).queuedInputs).toHaveLength(1);

    environment.api.enqueue(textReply('First done.'), textReply('Bananas.'));
    environment.api.releaseHeld();
    expect(await first).toEqual({ stopReason: 'end_turn' });
    expect(await second).toEqual({ stopReason: 'end_turn' });
    expect(order).toEqual(['first', 'second']);
    expect(pair.agentText(sessionId)).toBe('First done.Bananas.');
    // Both prompts are the client's own: neither is echoed back.
    expect(pair.updatesOf(sessionId, 'user_message_chunk')).toEqual([]);
    const session = await runtime.getSession(sessionId);
    expect(session.lastRun?.runId).toBe(queued.runId);
    expect(session.queuedInputs).toEqual([]);
    expect(modelSaw(environment, 'Then mention bananas.')).toBe(true);
  });

  it('session/cancel withdraws the queued prompt (it never reaches the model) and interrupts the running one', async () => {
    const { environment, runtime, pair, sessionId, first, queuePrompt } = await heldPrompt();
    const { answered: second, queued } = await queuePrompt('Never run this.');
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await second).toEqual({ stopReason: 'cancelled' });
    expect(await first).toEqual({ stopReason: 'cancelled' });
    const cancelled = await waitForEvent(runtime, sessionId, 'input.cancelled');
    expect(cancelled).toMatchObject({ inputId: queued.inputId, reason: 'withdrawn' });
    const session = await runtime.getSession(sessionId);
    expect(session.lastRun?.outcome).toBe('interrupted');
    expect(session.lastRun?.runId).not.toBe(queued.runId);
    expect(session.queuedInputs).toEqual([]);
    expect(modelSaw(environment, 'Never run this.')).toBe(false);
  });

  it('a queued prompt withdrawn by another host ends cancelled; the running one goes on', async () => {
    const { environment, runtime, sessionId, first, queuePrompt } = await heldPrompt();
    const { answered: second, queued } = await queuePrompt('Withdrawn elsewhere.');
    await runtime.cancelQueuedInput({ sessionId, inputId: queued.inputId });
    expect(await second).toEqual({ stopReason: 'cancelled' });
    environment.api.enqueue(textReply('First done.'));
    environment.api.releaseHeld();
    expect(await first).toEqual({ stopReason: 'end_turn' });
    expect(modelSaw(environment, 'Withdrawn elsewhere.')).toBe(false);
  });

  it('a slash command waits for the running prompt and runs after it, as a control, instead of being refused', async () => {
    const { environment, runtime, sessionId, first, prompt } = await heldPrompt();
    const order: string[] = [];
    void first.then(() => order.push('first'));
    const cost = prompt('/cost').then((response) => {
      order.push('cost');
      return response;
    });
    environment.api.enqueue(textReply('First done.'));
    environment.api.releaseHeld();
    expect(await first).toEqual({ stopReason: 'end_turn' });
    expect(await cost).toEqual({ stopReason: 'end_turn' });
    expect(order).toEqual(['first', 'cost']);
    const events = await runtime.readEvents(sessionId);
    const firstEnd = events.findIndex((event) => event.type === 'run.completed');
    const control = events.findIndex((event) => event.type === 'control.completed' && event.name === 'cost');
    expect(control).toBeGreaterThan(firstEnd);
  });

  it('session/close ends a slash command still waiting for the running prompt as cancelled, as a queued prompt is: it never runs', async () => {
    const { runtime, pair, sessionId, first, prompt } = await heldPrompt();
    const cost = prompt('/cost');
    await pair.agent.request(methods.agent.session.close, { sessionId });
    expect(await cost).toEqual({ stopReason: 'cancelled' });
    await first.catch(() => undefined);
    const events = await runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'control.completed')).toEqual([]);
  });

  it('session/close while /model waits for the agent starting on the first prompt: the /model prompt ends cancelled, not as a crash', async () => {
    const { environment, pair, runtime } = await start();
    environment.api.enqueue(holdReply());
    const sessionId = await pair.newSession(environment.workspace);
    const first = pair.prompt(sessionId, 'One.');
    await waitForEvent(runtime, sessionId, 'run.started');
    const model = pair.prompt(sessionId, '/model haiku');
    await pair.agent.request(methods.agent.session.close, { sessionId });
    const answered = await model.then(
      (response) => response,
      (error: unknown) => error,
    );
    expect(answered).toEqual({ stopReason: 'cancelled' });
    await first.catch(() => undefined);
  });

  it('session/cancel ends a slash command still waiting for the running prompt: it never runs', async () => {
    const { runtime, pair, sessionId, first, prompt } = await heldPrompt();
    const cost = prompt('/cost');
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await cost).toEqual({ stopReason: 'cancelled' });
    expect(await first).toEqual({ stopReason: 'cancelled' });
    await waitForEvent(runtime, sessionId, 'run.completed');
    const runs = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'run.started');
    expect(runs).toHaveLength(1);
  });

  it('the editor quitting while a slash command waits for the running prompt: the run ends interrupted and the command never runs', async () => {
    const { environment, runtime, pair, sessionId, first, prompt } = await heldPrompt();
    first.catch(() => undefined);
    const runControl = vi.spyOn(runtime, 'runControl');
    prompt('/cost').catch(() => undefined);
    // Refused run_active, it waits in the agent for the running prompt.
    await vi.waitFor(() => expect(runControl.mock.settledResults).toMatchObject([{ type: 'rejected' }]));
    await pair.close();
    expect((await waitForEvent(runtime, sessionId, 'run.completed')).outcome).toBe('interrupted');
    // A turn submitted after the editor went runs next; the command would have started before it ended.
    environment.api.enqueue(textReply('Still here.'));
    const { runId } = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Anyone?' }],
      delivery: 'after_turn',
    });
    await waitForEvent(runtime, sessionId, 'run.completed', { where: (event) => event.runId === runId });
    const events = await runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'control.completed')).toEqual([]);
  });
});
