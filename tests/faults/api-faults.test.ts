import {
  type FakeReply,
  dropConnectionReply,
  errorReply,
  malformedStreamReply,
  textReply,
} from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { answerText, processesWithEnvironment, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, runSequence } from '../conformance/conformance-harness.js';

// The model API failing in each way it can (the 500 case lives in conformance/errors-and-resume):
// the run ends failed with a stable code and the status, retryable only where sending the same
// request again can help (a refused request names what to fix instead), nothing keeps running once
// the session is done with, and the very next turn of the same session works.

interface ApiFault {
  readonly name: string;
  readonly reply: () => FakeReply;
  readonly details: Record<string, unknown>;
  readonly retryable: boolean;
  /** What the message tells the host to check (a refused request), or to do (a passing fault). */
  readonly says: RegExp;
}

const faults: readonly ApiFault[] = [
  {
    name: '400 invalid_request_error',
    reply: () => errorReply(400, { errorType: 'invalid_request_error' }),
    details: { httpStatus: 400 },
    retryable: false,
    says: /session's configuration/,
  },
  {
    name: '401 authentication_error',
    reply: () => errorReply(401),
    details: { httpStatus: 401 },
    retryable: false,
    says: /ANTHROPIC_API_KEY/,
  },
  {
    name: '403 permission_error',
    reply: () => errorReply(403),
    details: { httpStatus: 403 },
    retryable: false,
    says: /ANTHROPIC_API_KEY/,
  },
  {
    name: '404 not_found_error (an unknown model)',
    reply: () => errorReply(404, { errorType: 'not_found_error', message: 'model: claude-nope' }),
    details: { httpStatus: 404 },
    retryable: false,
    says: /model name/,
  },
  {
    name: '429 rate_limit_error (retry-after 0)',
    reply: () => errorReply(429, { retryAfterSeconds: 0 }),
    details: { httpStatus: 429 },
    retryable: true,
    says: /retry later/,
  },
  {
    name: '529 overloaded_error',
    reply: () => errorReply(529),
    details: { httpStatus: 529 },
    retryable: true,
    says: /retry later/,
  },
  {
    name: 'a connection dropped mid-stream',
    reply: () => dropConnectionReply(1),
    details: { reason: 'connection_failed' },
    retryable: true,
    says: /to try again, send a short turn/,
  },
  {
    name: 'a connection closed in the middle of an SSE event',
    reply: () => malformedStreamReply('cut_mid_event'),
    details: { reason: 'connection_failed' },
    retryable: true,
    says: /to try again, send a short turn/,
  },
  {
    name: 'an SSE event whose data is not JSON',
    reply: () => malformedStreamReply('invalid_json'),
    details: { reason: 'connection_failed' },
    retryable: true,
    says: /to try again, send a short turn/,
  },
];

function markersOf(events: readonly ProtocolEvent[]): string[] {
  return events.flatMap((event) => (event.type === 'session.process_started' ? [event.marker] : []));
}

describeTransports('model API faults', ({ start }) => {
  it.each(faults)(
    '$name: the run fails provider_api_error (retryable: $retryable), the next turn works, nothing is left behind',
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
        error: { code: 'provider_api_error', retryable: fault.retryable, details: fault.details },
      });
      const { message } = (events.at(-1) as { error: { message: string } }).error;
      expect(message).toMatch(fault.says);
      // A host retrying on `retryable` must not be told to retry a request that fails the same way each time.
      if (!fault.retryable) expect(message).not.toMatch(/\bretry\b/i);
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
