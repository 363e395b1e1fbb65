import type { AppendNotice } from '@tether/runtime';
import type { PoolClient } from 'pg';

/** The channel every store sharing a database notifies its appends on. */
export const appendChannel = 'tether_appends';

/**
 * Tells the other runtimes, in the unit's transaction, each session's last seq now: PostgreSQL
 * delivers the notices when (and only if) the transaction commits, in commit order. Ids and seqs
 * only, never an event's content: a listener reads the rows.
 */
export async function notifyAppends(
  client: PoolClient,
  appends: readonly { readonly sessionId: string; readonly lastSeq: number }[],
): Promise<void> {
  if (appends.length === 0) return;
  const payloads = appends.map(({ sessionId, lastSeq }) => JSON.stringify({ s: sessionId, q: lastSeq }));
  await client.query({
    name: 'tether-notify-appends',
    text: `SELECT pg_notify('${appendChannel}', payload) FROM unnest($1::text[]) WITH ORDINALITY AS notice (payload, n) ORDER BY n`,
    values: [payloads],
  });
}

/**
 * The payload of a deletion's notice, sent on the same channel in the transaction that deletes the
 * session (lease-statements.ts, deleteLease): `{"s":"<session id>","d":true}`.
 */
export function deletionPayload(sessionIdParameter: string): string {
  return `json_build_object('s', ${sessionIdParameter}::text, 'd', true)::text`;
}

/** What a notice on the channel says: a session's appends, or its deletion. */
export type HeardNotice =
  | { readonly kind: 'appended'; readonly notice: AppendNotice }
  | { readonly kind: 'deleted'; readonly sessionId: string };

/** A notice's payload as what it says; undefined for anything else on the channel. */
export function parseNotice(payload: string | undefined): HeardNotice | undefined {
  if (payload === undefined) return undefined;
  try {
    const { s, q, d } = JSON.parse(payload) as { s?: unknown; q?: unknown; d?: unknown };
    if (typeof s !== 'string') return undefined;
    if (d === true) return { kind: 'deleted', sessionId: s };
    return typeof q === 'number' && Number.isInteger(q)
      ? { kind: 'appended', notice: { sessionId: s, seq: q } }
      : undefined;
  } catch {
    return undefined;
  }
}
