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
