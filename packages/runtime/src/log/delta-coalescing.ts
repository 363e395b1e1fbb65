import { deltaTextLimit, type EventBody, type EventOfType } from '@tether/protocol';
import type { StagedEvent } from './event-writer.js';

type DeltaBody = Omit<EventOfType<'run.message_delta'> | EventOfType<'run.thinking_delta'>, 'sessionId' | 'seq' | 'at'>;

/** How far back a batch is searched for the session's previous event (other sessions' may be between). */
const lookBack = 8;

function isDelta(body: EventBody): body is DeltaBody {
  return body.type === 'run.message_delta' || body.type === 'run.thinking_delta';
}

/** The two deltas as one, when the second continues the first's block and the text stays within the limit. */
function joined(previous: EventBody, next: DeltaBody): DeltaBody | null {
  if (
    !isDelta(previous) ||
    previous.type !== next.type ||
    previous.runId !== next.runId ||
    previous.blockId !== next.blockId ||
    previous.parentToolUseId !== next.parentToolUseId ||
    previous.text.length + next.text.length > deltaTextLimit
  )
    return null;
  return { ...previous, text: previous.text + next.text };
}

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
      const combined = joined(previous.body, body);
      if (combined) {
        events[index] = { ...previous, body: combined as EventBody };
        return;
      }
      break;
    }
  }
  events.push(staged);
}
