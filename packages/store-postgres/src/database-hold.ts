import { AgentError } from '@tether/protocol';
import pg from 'pg';

/** The advisory lock key a runtime holds on its database ("tether" in ASCII, an arbitrary fixed value). */
const holdKey = 0x746574686572;

/** A connection holding the database for one runtime; releasing it ends the connection (and so the lock). */
export interface DatabaseHold {
  release(): Promise<void>;
}

/**
 * Takes the database for this runtime alone: a session-level advisory lock on a connection of its
 * own, kept while the store is open. Every runtime that opens a store treats the open sessions in it
 * as its own (it ends the runs it finds active, and the agent processes they record), so until
 * sessions are leased to one owner each, two runtimes on one database would end each other's work.
 */
export async function holdDatabase(url: string, target: string): Promise<DatabaseHold> {
  const client = new pg.Client({ connectionString: url });
  // A hold whose connection breaks is lost with it; without a listener the event would end the process.
  client.on('error', () => undefined);
  await client.connect();
  const { rows } = await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1) AS held', [holdKey]);
  if (!rows[0]?.held) {
    await client.end().catch(() => undefined);
    throw new AgentError({
      code: 'data_dir_in_use',
      message: `Another Tether runtime (a daemon, or a tether command running in its own process) is using the database ${target}. Until several daemons can share one database, run one daemon on it and point other commands at that daemon with --server.`,
      details: { reason: 'database_in_use' },
    });
  }
  return {
    async release() {
      await client.end().catch(() => undefined);
    },
  };
}
