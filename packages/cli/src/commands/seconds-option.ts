import { UsageError } from '../usage-error.js';

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
  if (value.trim() === '' || !Number.isFinite(seconds) || !accepts(seconds)) {
    throw new UsageError(`--${name} takes ${range}, not "${value}".`);
  }
  return Math.ceil(seconds * 1000);
}
