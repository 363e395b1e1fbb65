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
 * Every session's head in one statement: a head starting at seq 1 is inserted if there is none; any
 * other moves from firstSeq - 1 (the expected seq) to lastSeq. The heads to move are locked first, in
 * session-id order (as the leases are), so two units touching the same sessions cannot deadlock; a
 * writer that finds one locked waits for the other transaction and then reads the newest head, so of
 * two writers racing from the same seq exactly one succeeds, whichever process or pool they come
 * from. Gives the sessions whose head moved.
 */
const advanceHeads = `WITH planned AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS planned (session_id, expected_seq, last_seq)
  ),
  started AS (
    INSERT INTO event_heads (session_id, last_seq) SELECT session_id, last_seq FROM planned WHERE expected_seq = 0
    ON CONFLICT (session_id) DO NOTHING RETURNING session_id
  ),
  locked AS MATERIALIZED (
    SELECT head.session_id, head.last_seq FROM event_heads AS head JOIN planned USING (session_id)
    WHERE planned.expected_seq > 0 ORDER BY head.session_id FOR UPDATE OF head
  ),
  advanced AS (
    UPDATE event_heads AS head SET last_seq = planned.last_seq FROM planned JOIN locked USING (session_id)
    WHERE head.session_id = planned.session_id AND locked.last_seq = planned.expected_seq
    RETURNING head.session_id
  )
  SELECT session_id FROM started UNION ALL SELECT session_id FROM advanced`;

/**
 * The expected-version check, made by the database inside the unit's transaction: each session's
 * head moves from firstSeq - 1 to lastSeq, or the unit is refused (sequence_conflict), naming the
 * first session, in session-id order, whose head was elsewhere.
 */
export async function advanceEventHeads(client: PoolClient, appends: readonly SessionAppend[]): Promise<void> {
  if (appends.length === 0) return;
  const { rows } = await client.query<{ session_id: string }>({
    name: 'tether-advance-event-heads',
    text: advanceHeads,
    values: [
      appends.map((append) => append.sessionId),
      appends.map((append) => append.firstSeq - 1),
      appends.map((append) => append.lastSeq),
    ],
  });
  if (rows.length === appends.length) return;
  const advanced = new Set(rows.map((row) => row.session_id));
  const refused = appends.find((append) => !advanced.has(append.sessionId));
  if (refused === undefined) return;
  const heads = await client.query<{ last_seq: string }>('SELECT last_seq FROM event_heads WHERE session_id = $1', [
    refused.sessionId,
  ]);
  throw sequenceConflict(refused.firstSeq, Number(heads.rows[0]?.last_seq ?? 0) + 1);
}
