import { UsageError } from '../usage-error.js';

/** The environment variable --store defaults to. */
export const storeUrlVariable = 'TETHER_STORE_URL';

/** The --store value that starts a PostgreSQL server of its own on the data dir. */
export const embeddedPostgresValue = 'embedded-postgres';

export const storeHelp = `--store URL        keep sessions in PostgreSQL (postgres://USER:PASSWORD@HOST:PORT/DATABASE)
                     instead of the data dir's SQLite database (default: $${storeUrlVariable});
                     the data dir still holds the token and the worktrees (docs/store-postgres.md);
                     --store ${embeddedPostgresValue} starts a PostgreSQL server of its own on 127.0.0.1
                     (its cluster made on first use, kept with the data dir) for a single-machine trial`;

/** Where sessions are kept: the data dir's SQLite database, or a PostgreSQL database. */
export type StoreLocation =
  | { readonly kind: 'data-dir' }
  /** A PostgreSQL server this process starts on the data dir's cluster (embedded-postgres.ts). */
  | { readonly kind: 'embedded-postgres' }
  | {
      readonly kind: 'postgres';
      readonly url: string;
      /** The URL without its password or query, fit for logs and messages. */
      readonly description: string;
      /** The strings (the password, raw and decoded) that must never reach output. */
      readonly secrets: readonly string[];
    };

const acceptedForms = `postgres://USER:PASSWORD@HOST:PORT/DATABASE or postgresql://…, or ${embeddedPostgresValue}; leave it out to keep sessions in the data dir`;

/**
 * --store URL (or embedded-postgres), else TETHER_STORE_URL (an empty one counts as unset), else the data dir. Anything but
 * a postgres:// or postgresql:// URL is a usage error; the message never repeats the value, which
 * may hold a password.
 */
export function parseStoreLocation(
  flag: string | undefined,
  environment: Readonly<Record<string, string | undefined>>,
): StoreLocation {
  const fromVariable = environment[storeUrlVariable];
  const value = flag ?? (fromVariable === '' ? undefined : fromVariable);
  if (value === undefined) return { kind: 'data-dir' };
  if (value === embeddedPostgresValue) return { kind: 'embedded-postgres' };
  const source = flag === undefined ? storeUrlVariable : '--store';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // A password holding "/", "#", "?" or "@" (base64 often does) breaks the URL where it stands.
    const postgresLike = /^postgres(ql)?:\/\//.test(value);
    throw new UsageError(
      `${source} is not a URL: it takes ${acceptedForms}.${postgresLike ? ' A password holding / # ? @ or : must be percent-encoded (/ as %2F, # as %23, ? as %3F, @ as %40, : as %3A).' : ''}`,
    );
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new UsageError(`${source} takes ${acceptedForms}, not a ${url.protocol}// URL.`);
  if (url.hostname === '') throw new UsageError(`${source} names no host: it takes ${acceptedForms}.`);
  return {
    kind: 'postgres',
    url: value,
    description: `${url.protocol}//${url.username === '' ? '' : `${url.username}@`}${url.host}${url.pathname}`,
    secrets: secretsOf(url, value),
  };
}

/**
 * Every form the password may take in a message: as typed in the value (the user part, and each
 * `password=` of the query), as the URL parser re-encodes it, and decoded (a query's `+` as a space too).
 */
function secretsOf(url: URL, value: string): string[] {
  const typed = [typedPassword(value), ...typedQueryPasswords(value)];
  const passwords = [url.password, ...url.searchParams.getAll('password'), ...typed].filter((secret) => secret !== '');
  const forms = passwords.flatMap((secret) => [secret, safeDecode(secret), safeDecode(secret.replaceAll('+', ' '))]);
  // Longest first, so a password that holds another is taken out whole.
  return [...new Set(forms)].filter((secret) => secret !== '').sort((left, right) => right.length - left.length);
}

/** The password between the scheme's `//` and the host, as the value spells it (the last `@` ends it). */
function typedPassword(value: string): string {
  const authority = value.slice(value.indexOf('//') + 2).split(/[/?#]/)[0] ?? '';
  const at = authority.lastIndexOf('@');
  const userInfo = at === -1 ? '' : authority.slice(0, at);
  const colon = userInfo.indexOf(':');
  return colon === -1 ? '' : userInfo.slice(colon + 1);
}

/** Each `password=` of the query, as the value spells it. */
function typedQueryPasswords(value: string): string[] {
  const query = value.split('#')[0]?.split('?').slice(1).join('?') ?? '';
  return query
    .split('&')
    .filter((pair) => pair.startsWith('password='))
    .map((pair) => pair.slice('password='.length));
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The environment the agent's processes get: the command's own without TETHER_STORE_URL, whose
 * password the agent (and whatever its tools print into the transcript) has no business seeing.
 */
export function withoutStoreUrl(
  environment: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string | undefined>> {
  if (environment[storeUrlVariable] === undefined) return environment;
  const { [storeUrlVariable]: _removed, ...rest } = environment;
  return rest;
}

/** The --store option of the commands that open the sessions in this process when no daemon runs. */
export const storeOption = { store: { type: 'string' } } as const;
