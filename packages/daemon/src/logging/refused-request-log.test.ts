import { recordingLogger } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { RefusedRequestLog } from './refused-request-log.js';

const refusal = { method: 'GET', route: '/v1/sessions', durationMs: 0.1 };

describe('the rate-limited log of requests refused without a valid token', () => {
  it('logs the first refusal of each interval and one count of the others, when the interval is over', () => {
    const { logger, lines } = recordingLogger();
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const log = new RefusedRequestLog(logger, { intervalMs: 60_000, now: () => now });
    for (let index = 0; index < 100; index += 1) {
      log.refused(refusal);
      now += 100;
    }
    expect(lines).toEqual([
      { level: 'info', fields: { ...refusal, status: 401, errorCode: 'unauthorized' }, message: 'request' },
    ]);

    // The next refusal after the interval writes the count of the 99 held back, then is logged itself.
    now += 60_000;
    log.refused(refusal);
    expect(lines.slice(1)).toEqual([
      {
        level: 'warn',
        fields: {
          status: 401,
          errorCode: 'unauthorized',
          refused: 99,
          since: '2030-01-01T00:00:00.100Z',
          until: '2030-01-01T00:00:09.900Z',
        },
        message: expect.stringContaining('99 more requests refused'),
      },
      { level: 'info', fields: { ...refusal, status: 401, errorCode: 'unauthorized' }, message: 'request' },
    ]);

    // Nothing held back: flush writes nothing; one held back: flush counts it, once.
    log.flush();
    expect(lines).toHaveLength(3);
    now += 1;
    log.refused(refusal);
    log.flush();
    log.flush();
    expect(lines.slice(3)).toEqual([
      { level: 'warn', fields: expect.objectContaining({ refused: 1 }), message: expect.any(String) },
    ]);
  });
});
