import { textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { processesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, turnRequests } from './conformance-harness.js';

function modelChanges(events: readonly ProtocolEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'session.model_changed' ? [`${event.model}:${event.source}`] : []));
}

/**
 * set_model with no agent running names the model the next agent will use, as a running agent's
 * answer does: an alias resolved through the agent's model list, any other name as given.
 */
describeTransports('set_model before the agent started', ({ start }) => {
  it('an alias is answered, recorded and shown resolved; the agent then starts on it and reports nothing new', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('On it.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });

    expect((await runtime.setModel({ sessionId, model: 'sonnet' })).model).toBe('claude-sonnet-5-5');
    expect((await runtime.getSession(sessionId)).model).toBe('claude-sonnet-5-5');
    // The list was read by an agent of its own, ended by the time the receipt came: none runs for the session.
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    expect(modelChanges(await runtime.readEvents(sessionId))).toEqual(['claude-sonnet-5-5:command']);

    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
    expect((turnRequests(environment).at(-1)!.body as { model: string }).model).toBe('claude-sonnet-5-5');
    // What the agent reports at its start is what the receipt said: no second change.
    expect(modelChanges(await runtime.readEvents(sessionId))).toEqual(['claude-sonnet-5-5:command']);
  });

  it('default resolves to what the agent uses without a model; a name the list lacks is answered as given', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    expect((await runtime.setModel({ sessionId, model: 'haiku' })).model).toMatch(/^claude-haiku-/);
    expect((await runtime.setModel({ sessionId, model: 'default' })).model).toBe('claude-opus-5-5');
    expect((await runtime.setModel({ sessionId, model: 'claude-custom-1' })).model).toBe('claude-custom-1');
    expect((await runtime.getSession(sessionId)).model).toBe('claude-custom-1');
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
