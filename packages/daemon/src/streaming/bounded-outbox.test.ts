import { describe, expect, it } from 'vitest';
import { BoundedOutbox } from './bounded-outbox.js';

describe('the bounded outbox', () => {
  it('refuses a push past the frame or byte bound, but always takes a lone frame', () => {
    const byFrames = new BoundedOutbox({ maxFrames: 2, maxBytes: 1000 });
    expect(byFrames.push('a')).toBe(true);
    expect(byFrames.push('b')).toBe(true);
    expect(byFrames.push('c')).toBe(false);
    const byBytes = new BoundedOutbox({ maxFrames: 100, maxBytes: 10 });
    expect(byBytes.push('x'.repeat(50))).toBe(true);
    expect(byBytes.push('y')).toBe(false);
    expect(byBytes.shift()).toBe('x'.repeat(50));
    expect(byBytes.push('y')).toBe(true);
  });

  it('joins frames into chunks of about the size asked for', () => {
    const outbox = new BoundedOutbox({ maxFrames: 10, maxBytes: 1000 });
    for (const frame of ['aaa', 'bbb', 'ccc', 'ddd']) outbox.push(frame);
    expect(outbox.takeJoined(7)).toBe('aaabbb');
    expect(outbox.takeJoined(1)).toBe('ccc');
    expect(outbox.takeJoined(100)).toBe('ddd');
    expect(outbox.takeJoined(100)).toBeNull();
  });

  it('lets a patient producer wait for room instead of overflowing', async () => {
    const outbox = new BoundedOutbox({ maxFrames: 1, maxBytes: 1000 });
    outbox.push('first');
    let pushed = false;
    const waiting = outbox.pushWhenRoom('second').then((result) => (pushed = result));
    await Promise.resolve();
    expect(pushed).toBe(false);
    expect(outbox.shift()).toBe('first');
    expect(await waiting).toBe(true);
    expect(outbox.shift()).toBe('second');
  });

  it('ends: a reader gets what is queued and then the final frame; a discarding end drops the queue', async () => {
    const outbox = new BoundedOutbox({ maxFrames: 1, maxBytes: 1000 });
    outbox.push('queued');
    outbox.end({ finalFrame: 'last' });
    expect(outbox.push('late')).toBe(false);
    await outbox.waitForFrames();
    expect(outbox.takeJoined(1000)).toBe('queuedlast');
    expect(outbox.isEnded).toBe(true);

    const dropped = new BoundedOutbox({ maxFrames: 5, maxBytes: 1000 });
    dropped.push('a');
    const empty = dropped.waitUntilEmpty();
    dropped.end({ discard: true });
    await empty;
    expect(dropped.shift()).toBeUndefined();
    expect(await dropped.pushWhenRoom('b')).toBe(false);
  });
});
