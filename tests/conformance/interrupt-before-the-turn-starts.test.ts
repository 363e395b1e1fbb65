import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { pollUntil } from '@tether/provider-claude/test-support';
import { answerText, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, runSequence, turnRequests } from './conformance-harness.js';

// A stop asked right after the first turn was submitted, before the agent took that turn (it has
// not even read the line yet): the CLI answers the stop at once, then still starts the turn and
// calls the API. The run must end interrupted and the model call must be cut off (or never made),
// not left waiting on a reply that never comes (holdReply) until the stall check, minutes later.

/** Well below the stall check (10 minutes): without a second stop the held turn never ends at all. */
const runEndBoundMs = 20_000;

describeTransports('a stop asked before the first turn started', ({ start }) => {
  it(
    'ends the run interrupted and aborts the held model call; the next turn works',
    async () => {
      const environment = await start();
      // The next turn's request carries the stopped prompt too: it is told apart by its own text.
      environment.api.setResponder((request) =>
        request.lastUserText.includes('Are you there?') ? textReply('Back again.') : holdReply(),
      );
      const runtime = await environment.runtime();
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
      });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hold on.' }] });
      const receipt = await runtime.interruptRun({ sessionId });
      expect(receipt.runId).toBe(runId);
      const ended = await runtime.waitForRun(runId, { signal: AbortSignal.timeout(runEndBoundMs) });
      expect(ended).toMatchObject({ outcome: 'interrupted' });
      const sequence = runSequence(await runtime.readEvents(sessionId), runId);
      expect(sequence).toContain('run.interrupt_requested');
      expect(sequence.at(-1)).toBe('run.completed:interrupted');
      // The stopped turn's model call, if the agent made one, was cut off: the fake sees the client
      // go away a moment after the agent reports the stop (nothing announces it, so it is waited for, bounded).
      const stoppedCalls = () =>
        turnRequests(environment).filter((request) => !request.view?.lastUserText.includes('Are you there?'));
      await pollUntil(() => stoppedCalls().every((request) => request.clientAborted), { timeoutMs: 5_000 });
      expect(stoppedCalls().filter((request) => !request.clientAborted)).toEqual([]);
      expect(environment.api.heldCount).toBe(0);

      const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Are you there?' }] });
      const events = await runEvents(runtime, sessionId, next.runId);
      expect(answerText(events)).toBe('Back again.');
      expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
      // No process is left: cleanup (afterEach) fails the test if any process of this HOME outlives the runtime.
    },
    runEndBoundMs + 20_000,
  );
});
