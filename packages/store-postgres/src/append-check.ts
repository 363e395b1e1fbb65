import type { ProtocolEvent } from '@tether/protocol';
import type { PoolClient } from 'pg';
import { storeFailure } from './store-failure.js';

/** What a unit appends to one session: seqs firstSeq..lastSeq, with no gap. */
export interface SessionAppend {
  readonly sessionId: string;
  readonly firstSeq: number;
  readonly lastSeq: number;
}

function sequenceConflict(seq: number, next: number) {
  return storeFailure(
    `Refused to store event ${seq} of a session whose next event is ${next}; nothing was written.`,
    'sequence_conflict',
  );
}

/**
 * Each session's run of seqs in the unit, refused before anything is sent if the unit itself skips or
 * repeats one. Sorted by session id (code-unit order) so every writer locks heads in the same order
 * and two units touching the same sessions cannot deadlock.
 */
export function plannedAppends(events: readonly ProtocolEvent[]): SessionAppend[] {
  const appends = new Map<string, { firstSeq: number; lastSeq: number }>();
  for (const event of events) {
    const planned = appends.get(event.sessionId);
    if (planned === undefined) {
      appends.set(event.sessionId, { firstSeq: event.seq, lastSeq: event.seq });
      continue;
    }
    if (event.seq !== planned.lastSeq + 1) throw sequenceConflict(event.seq, planned.lastSeq + 1);
    planned.lastSeq = event.seq;
  }
  return [...appends]
    .map(([sessionId, planned]) => ({ sessionId, ...planned }))
    .sort((left, right) => (left.sessionId < right.sessionId ? -1 : left.sessionId > right.sessionId ? 1 : 0));
}

/**
 * The expected-version check, made by the database inside the unit's transaction: a session's head
 * moves from firstSeq - 1 to lastSeq, or the statement changes no row and the unit is refused. The
 * row lock the statement takes makes a concurrent writer wait for this transaction, then find the
 * head moved (PostgreSQL re-checks the WHERE on the newest row), so of two writers racing from the
 * same seq exactly one succeeds, whichever process or pool they come from.
 */
export async function advanceEventHeads(client: PoolClient, appends: readonly SessionAppend[]): Promise<void> {
  for (const { sessionId, firstSeq, lastSeq } of appends) {
    const advanced =
      firstSeq === 1
        ? await client.query({
            name: 'tether-start-event-head',
            text: 'INSERT INTO event_heads (session_id, last_seq) VALUES ($1, $2) ON CONFLICT (session_id) DO NOTHING',
            values: [sessionId, lastSeq],
          })
        : await client.query({
            name: 'tether-advance-event-head',
            text: 'UPDATE event_heads SET last_seq = $3 WHERE session_id = $1 AND last_seq = $2',
            values: [sessionId, firstSeq - 1, lastSeq],
          });
    if (advanced.rowCount === 1) continue;
    const { rows } = await client.query<{ last_seq: string }>(
      'SELECT last_seq FROM event_heads WHERE session_id = $1',
      [sessionId],
    );
    throw sequenceConflict(firstSeq, Number(rows[0]?.last_seq ?? 0) + 1);
  }
}
