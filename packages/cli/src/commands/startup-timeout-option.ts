import { secondsOption } from './seconds-option.js';

/** --startup-timeout SECONDS as milliseconds; undefined keeps the provider's default. */
export function parseStartupTimeout(value: string | undefined): number | undefined {
  return secondsOption(
    value,
    'startup-timeout',
    (seconds) => seconds > 0 && seconds <= 86_400,
    'a number of seconds above 0, at most 86400 (a day; e.g. 120)',
  );
}
