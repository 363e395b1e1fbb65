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

const startHeads = `INSERT INTO event_heads (session_id, last_seq) SELECT * FROM unnest($1::text[], $2::bigint[])
  ON CONFLICT (session_id) DO NOTHING RETURNING session_id`;

const advanceHead = `UPDATE event_heads SET last_seq = $3 WHERE session_id = $1 AND last_seq = $2 RETURNING session_id`;

/**
 * Several heads at once. They are locked first, in session-id order (as the leases are), so two units
 * touching the same sessions cannot deadlock; a writer that finds one locked waits for the other
 * transaction, then reads the newest head.
 */
const advanceHeads = `WITH planned AS MATERIALIZED (
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS planned (session_id, expected_seq, last_seq)
  ),
  locked AS MATERIALIZED (
    SELECT head.session_id, head.last_seq FROM event_heads AS head JOIN planned USING (session_id)
    ORDER BY head.session_id FOR UPDATE OF head
  )
  UPDATE event_heads AS head SET last_seq = planned.last_seq FROM planned JOIN locked USING (session_id)
  WHERE head.session_id = planned.session_id AND locked.last_seq = planned.expected_seq
  RETURNING head.session_id`;

/** The sessions whose head moved: one statement for the heads a unit starts, one for those it advances. */
async function moveHeads(client: PoolClient, appends: readonly SessionAppend[]): Promise<Set<string>> {
  const moved = new Set<string>();
  const starts = appends.filter((append) => append.firstSeq === 1);
  const advances = appends.filter((append) => append.firstSeq > 1);
  const statements: { name: string; text: string; values: unknown[] }[] = [];
  if (starts.length > 0)
    statements.push({
      name: 'tether-start-event-heads',
      text: startHeads,
      values: [starts.map((append) => append.sessionId), starts.map((append) => append.lastSeq)],
    });
  const [only] = advances;
  if (advances.length === 1 && only !== undefined)
    // One head: the plain UPDATE, cheaper to run than the statement that orders several.
    statements.push({
      name: 'tether-advance-event-head',
      text: advanceHead,
      values: [only.sessionId, only.firstSeq - 1, only.lastSeq],
    });
  else if (advances.length > 1)
    statements.push({
      name: 'tether-advance-event-heads',
      text: advanceHeads,
      values: [
        advances.map((append) => append.sessionId),
        advances.map((append) => append.firstSeq - 1),
        advances.map((append) => append.lastSeq),
      ],
    });
  for (const statement of statements) {
    const { rows } = await client.query<{ session_id: string }>(statement);
    for (const row of rows) moved.add(row.session_id);
  }
  return moved;
}

/**
 * The expected-version check, made by the database inside the unit's transaction: a session's head
 * starts at lastSeq if the unit starts it (firstSeq 1) and there is none, or moves from firstSeq - 1
 * to lastSeq; if any does not, the unit is refused (sequence_conflict), naming the first session, in
 * session-id order, whose head was elsewhere. The row lock an UPDATE takes makes a concurrent writer
 * wait for this transaction, then find the head moved (PostgreSQL re-checks the WHERE on the newest
 * row), so of two writers racing from the same seq exactly one succeeds, whichever process or pool
 * they come from. Statements per unit: one or two, whatever its number of sessions.
 */
export async function advanceEventHeads(client: PoolClient, appends: readonly SessionAppend[]): Promise<void> {
  if (appends.length === 0) return;
  const moved = await moveHeads(client, appends);
  const refused = appends.find((append) => !moved.has(append.sessionId));
  if (refused === undefined) return;
  const heads = await client.query<{ last_seq: string }>('SELECT last_seq FROM event_heads WHERE session_id = $1', [
    refused.sessionId,
  ]);
  throw sequenceConflict(refused.firstSeq, Number(heads.rows[0]?.last_seq ?? 0) + 1);
}
