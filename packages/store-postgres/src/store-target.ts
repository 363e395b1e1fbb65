import { storeFailure } from './store-failure.js';

/** Where the URL points, for messages: host, port and database, never the user or password. */
export function describeTarget(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw storeFailure(
      'The store URL is not a URL. Give one like postgres://user:password@host:5432/database.',
      'invalid_url',
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw storeFailure(
      `The store URL has the scheme ${parsed.protocol} where postgres: was expected. Give one like postgres://user:password@host:5432/database.`,
      'invalid_url',
    );
  }
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`;
}

/** The modes pg 8 takes as verify-full, and warns about on stderr (libpq's are weaker; pg 9 takes those). */
const verifiedAsFull = new Set(['prefer', 'require', 'verify-ca']);

/**
 * The URL as pg is to connect with it: `sslmode=prefer`, `require` or `verify-ca` spelt `verify-full`,
 * which is what pg 8 does with them anyway (the server's certificate checked, SSL required), so it
 * does not print its "SECURITY WARNING" about those aliases on the daemon's stderr. A URL that asks
 * for libpq's own meaning (`uselibpqcompat=true`) is left as it is.
 */
export function connectionUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const sslmode = parsed.searchParams.get('sslmode');
  if (sslmode === null || !verifiedAsFull.has(sslmode) || parsed.searchParams.has('uselibpqcompat')) return url;
  parsed.searchParams.set('sslmode', 'verify-full');
  return parsed.toString();
}
