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

/** A notice's payload as an AppendNotice; undefined for anything else on the channel. */
export function parseAppendNotice(payload: string | undefined): AppendNotice | undefined {
  if (payload === undefined) return undefined;
  try {
    const { s, q } = JSON.parse(payload) as { s?: unknown; q?: unknown };
    return typeof s === 'string' && typeof q === 'number' && Number.isInteger(q) ? { sessionId: s, seq: q } : undefined;
  } catch {
    return undefined;
  }
}
