import { UsageError } from '../usage-error.js';

/** Node's timers hold at most 2^31 - 1 ms (~24.8 days); a longer one fires at once. */
const longestSeconds = Math.floor(2_147_483_647 / 1000);

/**
 * An option given in seconds (`--NAME SECONDS`), as milliseconds; undefined when it was not given.
 * `range` words what `accepts` takes, with an example, for the refusal: "a positive number of seconds (e.g. 120)".
 */
export function secondsOption(
  value: string | undefined,
  name: string,
  accepts: (seconds: number) => boolean,
  range: string,
): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  // Written as a person writes seconds: 15 or 1.5, not 1e1 or 0x10 (which Number also reads).
  if (!/^\d+(\.\d+)?$/.test(value) || !Number.isFinite(seconds) || !accepts(seconds) || seconds > longestSeconds) {
    throw new UsageError(`--${name} takes ${range}, not "${value}".`);
  }
  return Math.ceil(seconds * 1000);
}
