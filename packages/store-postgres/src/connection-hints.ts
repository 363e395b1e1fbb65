/** What to do, by SQLSTATE: the failures an operator meets when the store cannot work. */
const bySqlState: Record<string, string> = {
  '28P01':
    'The server refused the user name or password: correct the credentials in the store URL (or the role on the server).',
  '28000':
    "The server refused this user from this host: allow it in the server's pg_hba.conf, or use a user that is allowed.",
  '3D000': 'The database named in the store URL does not exist: create it (createdb NAME) or correct the name.',
  '53300':
    'The server has no connection left to give: raise its max_connections, or run fewer daemons (each opens up to 10, and 1 more for notices).',
  '57P01':
    'An administrator shut the server down, or ended this connection: start it again (writes are retried for about 10 s).',
  '57P02': 'The server crashed and is restarting: wait for it (writes are retried for about 10 s).',
  '57P03': 'The server is starting up or shutting down: wait until it accepts connections.',
  '25006': 'The server is read-only (a standby, or default_transaction_read_only): point the store URL at the primary.',
  '42501': 'This user lacks a privilege the store needs: let it create and own the tables in the database.',
  '53100': "The server's disk is full: free space on it.",
  '25P03':
    'The server ended a transaction left idle past the lease ttl: this daemon was stalled; it retries on its own.',
};

/** What to do, by errno: the connection could not be made or broke. */
const byErrno: Record<string, string> = {
  ECONNREFUSED:
    'Nothing accepts connections at the host and port of the store URL: start the PostgreSQL server, or correct the host and port.',
  ENOTFOUND: 'The host name of the store URL does not resolve: correct it, or check DNS.',
  EAI_AGAIN: 'The host name of the store URL could not be resolved just now: check DNS.',
  ETIMEDOUT: 'The server did not answer in time: check the host, the network and any firewall between them.',
  EHOSTUNREACH: 'The server cannot be reached from this machine: check the host, the network and any firewall.',
  ENETUNREACH: 'The server cannot be reached from this machine: check the host, the network and any firewall.',
  ECONNRESET: 'The connection to the server was cut: check that it is up and not restarting.',
  EPIPE: 'The connection to the server was cut: check that it is up and not restarting.',
};

const fallback =
  'Check that the PostgreSQL server is up, reachable from this machine and accepts this user, then retry.';

/** pg's own words for a server that takes no SSL while the URL asks for it (sslmode=require), which carry no code. */
const sslRefused = /does not support SSL connections/i;
const sslHint =
  'The server takes no SSL connections and the store URL asks for SSL (sslmode): turn SSL on in the server, or drop sslmode from the URL on a network you trust.';

/** pg's own words for a broken connection, which carry no code. */
const brokenWithoutCode = /connection terminated|connection error|not queryable/i;

/**
 * What an operator should do about a failure of the database: by its SQLSTATE or errno, else the
 * generic advice. Never the server's own text (it may quote a statement's values).
 */
export function connectionHint(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const hint = bySqlState[code] ?? byErrno[code];
    if (hint !== undefined) return hint;
    // Class 08: a connection exception, however the server worded it.
    if (/^08[0-9A-Z]{3}$/.test(code)) return byErrno['ECONNRESET']!;
  }
  if (error instanceof Error && brokenWithoutCode.test(error.message)) return byErrno['ECONNRESET']!;
  if (error instanceof Error && sslRefused.test(error.message)) return sslHint;
  return fallback;
}
