import { UsageError } from '../usage-error.js';

/** --startup-timeout SECONDS as milliseconds; undefined keeps the provider's default. */
export function parseStartupTimeout(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds <= 0) {
    throw new UsageError(`--startup-timeout takes a positive number of seconds (e.g. 120), not "${value}".`);
  }
  return Math.ceil(seconds * 1000);
}
