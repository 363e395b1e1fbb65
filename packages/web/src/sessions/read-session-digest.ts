import type { TetherClient } from '@tether/client';
import type { ProtocolEvent, RunOutcome, SessionSnapshot } from '@tether/protocol';
import type { SessionDigest } from './session-order.js';

// A read that has not reached its seq by then is abandoned (the daemon went away): the next poll tries again.
const readTimeoutMs = 5_000;
// The last run's run.completed sits within the last few events (only process and diagnostic events follow it).
const tailEvents = 12;

/** The events of a session from `afterSeq` up to `untilSeq`, stopping early when `enough` says so. */
async function readEvents(client: TetherClient, sessionId: string, afterSeq: number, untilSeq: number, enough: (event: ProtocolEvent) => boolean): Promise<void> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), readTimeoutMs);
  try {
    for await (const event of client.subscribe(sessionId, { afterSeq, signal: controller.signal })) {
      if (enough(event) || event.seq >= untilSeq) return;
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/**
 * What the list shows that a snapshot does not hold: the first turn's text and how the last run
 * ended. Read from the event stream with bounded reads (the head up to the first turn, the tail
 * for the outcome), so a long session costs a few events, not its history.
 */
export async function readSessionDigest(client: TetherClient, snapshot: SessionSnapshot, previous: SessionDigest | undefined): Promise<SessionDigest> {
  let title = previous?.title ?? null;
  if (title === null && snapshot.lastSeq > 0) {
    await readEvents(client, snapshot.sessionId, 0, snapshot.lastSeq, (event) => {
      if (event.type !== 'run.started' || event.control !== undefined) return false;
      title = event.input === null ? '(input redacted)' : event.input.map((part) => part.text).join(' ');
      return true;
    });
  }
  let lastOutcome: RunOutcome | null = previous?.lastOutcome ?? null;
  if (snapshot.state === 'idle' && snapshot.lastSeq > (previous?.checkedSeq ?? 0)) {
    await readEvents(client, snapshot.sessionId, Math.max(0, snapshot.lastSeq - tailEvents), snapshot.lastSeq, (event) => {
      if (event.type === 'run.completed') lastOutcome = event.outcome;
      return false;
    });
  }
  return { title, lastOutcome, checkedSeq: snapshot.lastSeq };
}

/** Whether a digest must be read (again) for this snapshot. */
export function digestIsStale(snapshot: SessionSnapshot, digest: SessionDigest | undefined): boolean {
  if (snapshot.lastSeq === 0) return false;
  if (digest === undefined) return true;
  // Not titled yet (no turn when last read) or a run ended since: read again.
  return snapshot.lastSeq > digest.checkedSeq && (digest.title === null || snapshot.state === 'idle');
}
