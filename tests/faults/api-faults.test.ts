import { type FakeReply, dropConnectionReply, errorReply, textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { answerText, processesWithEnvironment, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, runSequence } from '../conformance/conformance-harness.js';

// The model API failing in each way it can (the 500 case lives in conformance/errors-and-resume):
// the run ends failed with a stable code and the status, nothing keeps running once the session is
// done with, and the very next turn of the same session works.

interface ApiFault {
  readonly name: string;
  readonly reply: () => FakeReply;
  readonly details: Record<string, unknown>;
}

const faults: readonly ApiFault[] = [
  { name: '401 authentication_error', reply: () => errorReply(401), details: { httpStatus: 401 } },
  { name: '403 permission_error', reply: () => errorReply(403), details: { httpStatus: 403 } },
  {
    name: '429 rate_limit_error (retry-after 0)',
    reply: () => errorReply(429, { retryAfterSeconds: 0 }),
    details: { httpStatus: 429 },
  },
  { name: '529 overloaded_error', reply: () => errorReply(529), details: { httpStatus: 529 } },
  {
    name: 'a connection dropped mid-stream',
    reply: () => dropConnectionReply(1),
    details: { reason: 'connection_failed' },
  },
];

function markersOf(events: readonly ProtocolEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'session.process_started' ? [event.marker] : []));
}

describeTransports('model API faults', ({ start }) => {
  it.each(faults)(
    '$name: the run fails provider_api_error, the next turn works, nothing is left behind',
    async (fault) => {
      const environment = await start({ maxRetries: 1 });
      // Every request fails, retries and the CLI's own fallbacks included, until the fault is lifted.
      let failing = true;
      environment.api.setResponder(() => (failing ? fault.reply() : undefined));
      const runtime = await environment.runtime();
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
      });
      const failed = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'First.' }] });
      const events = await runEvents(runtime, sessionId, failed.runId);
      expect(events.at(-1)).toMatchObject({
        type: 'run.completed',
        outcome: 'failed',
        error: { code: 'provider_api_error', retryable: true, details: fault.details },
      });
      expect(runSequence(events, failed.runId).filter((token) => token.startsWith('run.completed'))).toEqual([
        'run.completed:failed:provider_api_error',
      ]);

      failing = false;
      environment.api.enqueue(textReply('Back again.'));
      const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Second.' }] });
      expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Back again.');

      const markers = markersOf(await runtime.readEvents(sessionId));
      expect(markers.length).toBeGreaterThan(0);
      await runtime.closeSession({ sessionId });
      for (const marker of markers) expect(processesWithEnvironment('TETHER_PROCESS_MARKER', marker)).toEqual([]);
      expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    },
  );
});
