import { recordingLogger } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { RefusedRequestLog } from './refused-request-log.js';

const refusal = { method: 'GET', route: '/v1/sessions', durationMs: 0.1 };

describe('the rate-limited log of refusals anyone can cause at will', () => {
  it('logs the first refusal of each interval and one count of the others, when the interval is over', () => {
    const { logger, lines } = recordingLogger();
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const log = new RefusedRequestLog(logger, { intervalMs: 60_000, now: () => now });
    for (let index = 0; index < 100; index += 1) {
      log.refused('unauthorized', refusal, 'request');
      now += 100;
    }
    expect(lines).toEqual([
      { level: 'info', fields: { ...refusal, status: 401, errorCode: 'unauthorized' }, message: 'request' },
    ]);

    // The next refusal after the interval writes the count of the 99 held back, then is logged itself.
    now += 60_000;
    log.refused('unauthorized', refusal, 'request');
    expect(lines.slice(1)).toEqual([
      {
        level: 'warn',
        fields: {
          status: 401,
          errorCode: 'unauthorized',
          refusal: 'unauthorized',
          refused: 99,
          since: '2030-01-01T00:00:00.100Z',
          until: '2030-01-01T00:00:09.900Z',
        },
        message: expect.stringContaining('requests refused without a valid token (401): 99 more'),
      },
      { level: 'info', fields: { ...refusal, status: 401, errorCode: 'unauthorized' }, message: 'request' },
    ]);

    // Nothing held back: flush writes nothing; one held back: flush counts it, once.
    log.flush();
    expect(lines).toHaveLength(3);
    now += 1;
    log.refused('unauthorized', refusal, 'request');
    log.flush();
    log.flush();
    expect(lines.slice(3)).toEqual([
      { level: 'warn', fields: expect.objectContaining({ refused: 1 }), message: expect.any(String) },
    ]);
  });

  it('writes the count when the interval ends, with no refusal after it (an hour-long flood is told every minute)', () => {
    const { logger, lines } = recordingLogger();
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const due: Array<{ callback: () => void; at: number; cancelled: boolean }> = [];
    const timer = (callback: () => void, delayMs: number) => {
      const entry = { callback, at: now + delayMs, cancelled: false };
      due.push(entry);
      return () => {
        entry.cancelled = true;
      };
    };
    const log = new RefusedRequestLog(logger, { intervalMs: 60_000, now: () => now, timer });
    log.refused('unauthorized', refusal, 'request');
    now += 1_000;
    log.refused('unauthorized', refusal, 'request');
    log.refused('unauthorized', refusal, 'request');
    // One report due, at the interval's end.
    expect(due.map((entry) => entry.at)).toEqual([Date.parse('2030-01-01T00:01:00.000Z')]);
    expect(lines).toHaveLength(1);
    now = due[0]!.at;
    due[0]!.callback();
    expect(lines.slice(1)).toEqual([
      { level: 'warn', fields: expect.objectContaining({ refused: 2 }), message: expect.any(String) },
    ]);
    // The next refusal starts an interval of its own, logged in full; flush at shutdown cancels what is due.
    log.refused('unauthorized', refusal, 'request');
    log.refused('unauthorized', refusal, 'request');
    log.flush();
    expect(lines.slice(2).map((line) => line.level)).toEqual(['info', 'warn']);
    expect(due[1]?.cancelled).toBe(true);
  });

  it('counts each kind on its own, so a flood of one neither hides nor holds back another', () => {
    const { logger, lines } = recordingLogger();
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const log = new RefusedRequestLog(logger, { intervalMs: 60_000, now: () => now });
    for (let index = 0; index < 50; index += 1) {
      log.refused('foreign_host_or_origin', refusal, 'request');
      now += 10;
    }
    // The first 401 after a flood of 403s is logged all the same.
    log.refused('unauthorized', refusal, 'request');
    log.refused('unauthorized', refusal, 'request');
    log.refused(
      'websocket_unauthorized',
      { route: '/v1/ws', reason: 'unauthorized' },
      'websocket closed by the daemon',
    );
    log.flush();
    expect(lines).toEqual([
      { level: 'info', fields: { ...refusal, status: 403 }, message: 'request' },
      { level: 'info', fields: { ...refusal, status: 401, errorCode: 'unauthorized' }, message: 'request' },
      {
        level: 'info',
        fields: { route: '/v1/ws', reason: 'unauthorized', closeCode: 4401, errorCode: 'unauthorized' },
        message: 'websocket closed by the daemon',
      },
      {
        level: 'warn',
        fields: expect.objectContaining({ status: 403, refusal: 'foreign_host_or_origin', refused: 49 }),
        message: expect.stringContaining('refused for a foreign Host or Origin (403): 49 more,'),
      },
      {
        level: 'warn',
        fields: expect.objectContaining({ status: 401, refusal: 'unauthorized', refused: 1 }),
        message: expect.stringContaining('requests refused without a valid token (401): 1 more,'),
      },
    ]);
  });
});
