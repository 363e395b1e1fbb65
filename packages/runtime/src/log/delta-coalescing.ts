import { deltaTextLimit, type EventBody, type EventOfType } from '@tether/protocol';
import type { StagedEvent } from './event-writer.js';

type DeltaBody = Omit<EventOfType<'run.message_delta'> | EventOfType<'run.thinking_delta'>, 'sessionId' | 'seq' | 'at'>;

/** How far back a batch is searched for the session's previous event (other sessions' may be between). */
const lookBack = 8;

function isDelta(body: EventBody): body is DeltaBody {
  return body.type === 'run.message_delta' || body.type === 'run.thinking_delta';
}

/** Whether the second delta continues the first's block and the joined text stays within the limit. */
function joins(previous: EventBody, next: DeltaBody): previous is DeltaBody {
  return (
    isDelta(previous) &&
    previous.type === next.type &&
    previous.runId === next.runId &&
    previous.blockId === next.blockId &&
    previous.parentToolUseId === next.parentToolUseId &&
    previous.text.length + next.text.length <= deltaTextLimit
  );
}

/**
 * Joined events this module made itself: nobody else holds them, so the next delta of the block is
 * appended in place instead of copying the event and its body once per delta.
 */
const ownJoins = new WeakSet<StagedEvent>();

/**
 * Adds an event to a batch not yet written. A text or thinking delta that continues the block of
 * its session's last event in the batch is folded into that event (its text appended, its `at` the
 * first delta's): a streamed answer is thousands of small deltas, and each event costs a row, a
 * publish and every subscriber's handling. Nothing waits for this: only what is already waiting
 * for the same commit is joined, so the first delta of a block is written exactly when it was.
 */
export function addStagedEvent(events: StagedEvent[], staged: StagedEvent): void {
  const body = staged.body;
  if (isDelta(body)) {
    for (let index = events.length - 1; index >= 0 && index >= events.length - lookBack; index -= 1) {
      const previous = events[index]!;
      if (previous.sessionId !== staged.sessionId) continue;
      const previousBody = previous.body;
      if (!joins(previousBody, body)) break;
      if (ownJoins.has(previous)) {
        (previousBody as { text: string }).text += body.text;
        return;
      }
      const combined = { ...previous, body: { ...previousBody, text: previousBody.text + body.text } as EventBody };
      ownJoins.add(combined);
      events[index] = combined;
      return;
    }
  }
  events.push(staged);
}
