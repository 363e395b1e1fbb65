import { secondsOption } from './seconds-option.js';

/** --startup-timeout SECONDS as milliseconds; undefined keeps the provider's default. */
export function parseStartupTimeout(value: string | undefined): number | undefined {
  return secondsOption(value, 'startup-timeout', (seconds) => seconds > 0, 'a positive number of seconds (e.g. 120)');
}
