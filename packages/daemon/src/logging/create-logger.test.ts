import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { type DaemonLogger, createLogger } from './create-logger.js';

describe('the daemon logger', () => {
  it('uses a given pino logger as it is', () => {
    const given = pino({ level: 'silent' });
    const accepted: DaemonLogger = given;
    expect(createLogger(accepted)).toBe(given);
  });

  it('makes a pino logger from options', () => {
    const made = createLogger({ level: 'warn' }) as unknown as { level: string };
    expect(made.level).toBe('warn');
  });
});
