import { UsageError } from '../usage-error.js';
import { secondsOption } from './seconds-option.js';

export const sharedStoreHelp = `--lease-ttl SECONDS  with PostgreSQL, how long a daemon that stops renewing its sessions' leases
                     keeps them before another daemon on the database takes them over (default 15)
--advertise-url URL  the URL other daemons on the database name when a command reaches them for a
                     session this one drives (default: the URL it listens on; set it behind a proxy)`;

/** --lease-ttl SECONDS as milliseconds; undefined keeps the store's default. */
export function parseLeaseTtl(value: string | undefined): number | undefined {
  // Below a second the heartbeat (a third of it) would be a stream of writes, and a busy database could miss it.
  return secondsOption(
    value,
    'lease-ttl',
    (seconds) => seconds >= 1 && seconds <= 3600,
    'a number of seconds from 1 to 3600 (e.g. 15)',
  );
}

/** --advertise-url: an http(s) URL other daemons can hand to clients; undefined advertises the listening URL. */
export function parseAdvertiseUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--advertise-url takes an http:// or https:// URL (e.g. http://10.0.0.5:7437), not "${value}".`,
    );
  }
  // The value is not repeated here: it holds a password, and this message may end up in a log.
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--advertise-url takes a URL with no user or password: clients bring their own token.');
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(
      `--advertise-url takes an http:// or https:// URL (e.g. http://10.0.0.5:7437), not "${value}".`,
    );
  return value.replace(/\/+$/, '');
}
