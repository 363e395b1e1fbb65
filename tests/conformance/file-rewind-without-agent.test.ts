import { textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { agentErrorOf, processesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, history, turnRequests } from './conformance-harness.js';

function processesStarted(events: readonly ProtocolEvent[]): number {
  return events.filter((event) => event.type === 'session.process_started').length;
}

/**
 * A file rewind asked while the session has no agent: refused at once when the session's
 * conversation holds no turn yet (no agent could have a checkpoint), else asked of an agent started
 * as the next turn would start it (resuming the conversation), which that turn then uses.
 */
describeTransports('a file rewind asked with no agent running', ({ start }) => {
  async function open() {
    const environment = await start();
    environment.api.setResponder(() => textReply('Noted.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const turn = async (text: string) => {
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
      expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
      return runId;
    };
    return { environment, runtime, sessionId, turn };
  }

  it('rewound to before its first turn, the conversation holds none: refused no_checkpoint without starting an agent', async () => {
    const { environment, runtime, sessionId, turn } = await open();
    const first = await turn('Prompt one.');
    // The rewind lets the agent go; the next turn would start a new conversation.
    await runtime.rewindSession({ sessionId, toRunId: first });
    const before = processesStarted(await runtime.readEvents(sessionId));
    const refused = await agentErrorOf(runtime.rewindSession({ sessionId, toRunId: first, files: true }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(refused.message).toMatch(/Rewind without files, or to another run\.$/);
    expect(processesStarted(await runtime.readEvents(sessionId))).toBe(before);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    // The session goes on as before: the next turn starts the new conversation.
    await turn('Prompt two.');
    expect(history(environment, turnRequests(environment).length - 1)).not.toContain('Prompt one.');
  });

  it('after the agent was let go, a refusal asked of a resumed agent leaves the session that agent, which the next turn uses', async () => {
    const { environment, runtime, sessionId, turn } = await open();
    const first = await turn('Prompt one.');
    await runtime.rewindSession({ sessionId, toRunId: first });
    await turn('Prompt two.');
    // Closed and reopened: no agent runs; the conversation (with turn two only) is resumed by the next one.
    await runtime.closeSession({ sessionId });
    await runtime.openSession({ continueSession: sessionId });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    const before = processesStarted(await runtime.readEvents(sessionId));
    const refused = await agentErrorOf(runtime.rewindSession({ sessionId, toRunId: first, files: true }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(processesStarted(await runtime.readEvents(sessionId))).toBe(before + 1);
    expect(processesWithEnvironment('HOME', environment.home)).toHaveLength(1);
    await turn('Prompt three.');
    expect(processesStarted(await runtime.readEvents(sessionId))).toBe(before + 1);
    const resumed = history(environment, turnRequests(environment).length - 1);
    expect(resumed).toContain('Prompt two.');
    expect(resumed).not.toContain('Prompt one.');
  });
});
