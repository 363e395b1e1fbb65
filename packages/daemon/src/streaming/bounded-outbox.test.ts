import { describe, expect, it } from 'vitest';
import { BoundedOutbox, type OutboxFrame } from './bounded-outbox.js';

const bytes = (text: string): OutboxFrame => Buffer.from(text);
const text = (frame: OutboxFrame | null | undefined): string | null | undefined =>
  frame ? Buffer.from(frame).toString() : frame;

describe('the bounded outbox', () => {
  it('refuses a push past the frame or byte bound, but always takes a lone frame', () => {
    const byFrames = new BoundedOutbox({ maxFrames: 2, maxBytes: 1000 });
    expect(byFrames.push(bytes('a'))).toBe(true);
    expect(byFrames.push(bytes('b'))).toBe(true);
    expect(byFrames.push(bytes('c'))).toBe(false);
    const byBytes = new BoundedOutbox({ maxFrames: 100, maxBytes: 10 });
    expect(byBytes.push(bytes('x'.repeat(50)))).toBe(true);
    expect(byBytes.push(bytes('y'))).toBe(false);
    expect(text(byBytes.shift())).toBe('x'.repeat(50));
    expect(byBytes.push(bytes('y'))).toBe(true);
  });

  it('joins frames into chunks of about the size asked for', () => {
    const outbox = new BoundedOutbox({ maxFrames: 10, maxBytes: 1000 });
    for (const frame of ['aaa', 'bbb', 'ccc', 'ddd']) outbox.push(bytes(frame));
    expect(text(outbox.takeJoined(7))).toBe('aaabbb');
    expect(text(outbox.takeJoined(1))).toBe('ccc');
    expect(text(outbox.takeJoined(100))).toBe('ddd');
    expect(text(outbox.takeJoined(100))).toBeNull();
  });

  it('lets a patient producer wait for room instead of overflowing', async () => {
    const outbox = new BoundedOutbox({ maxFrames: 1, maxBytes: 1000 });
    outbox.push(bytes('first'));
    let pushed = false;
    const waiting = outbox.pushWhenRoom(bytes('second')).then((result) => (pushed = result));
    await Promise.resolve();
    expect(pushed).toBe(false);
    expect(text(outbox.shift())).toBe('first');
    expect(await waiting).toBe(true);
    expect(text(outbox.shift())).toBe('second');
  });

  it('lets a waiting producer fill only half the bound, keeping the rest for pushes that cannot wait', async () => {
    const outbox = new BoundedOutbox({ maxFrames: 4, maxBytes: 1000 });
    expect(await outbox.pushWhenRoom(bytes('r1'))).toBe(true);
    expect(await outbox.pushWhenRoom(bytes('r2'))).toBe(true);
    let third = false;
    const waiting = outbox.pushWhenRoom(bytes('r3')).then((result) => (third = result));
    await Promise.resolve();
    expect(third).toBe(false);
    expect(outbox.push(bytes('live1'))).toBe(true);
    expect(outbox.push(bytes('live2'))).toBe(true);
    expect(outbox.push(bytes('live3'))).toBe(false);
    for (let taken = 0; taken < 3; taken += 1) outbox.shift();
    expect(await waiting).toBe(true);
    expect(text(outbox.takeJoined(1000))).toBe('live2r3');
  });

  it('drops a waiting frame whose signal aborted: nothing is queued after its subscription ended', async () => {
    const outbox = new BoundedOutbox({ maxFrames: 2, maxBytes: 1000 });
    outbox.push(bytes('queued'));
    const subscription = new AbortController();
    const waiting = outbox.pushWhenRoom(bytes('stale'), subscription.signal);
    subscription.abort();
    expect(await waiting).toBe(false);
    expect(text(outbox.shift())).toBe('queued');
    expect(outbox.size).toBe(0);
  });

  it('ends: a reader gets what is queued and then the final frame; a discarding end drops the queue', async () => {
    const outbox = new BoundedOutbox({ maxFrames: 1, maxBytes: 1000 });
    outbox.push(bytes('queued'));
    outbox.end({ finalFrame: bytes('last') });
    expect(outbox.push(bytes('late'))).toBe(false);
    await outbox.waitForFrames();
    expect(text(outbox.takeJoined(1000))).toBe('queuedlast');
    expect(outbox.isEnded).toBe(true);

    const dropped = new BoundedOutbox({ maxFrames: 5, maxBytes: 1000 });
    dropped.push(bytes('a'));
    const empty = dropped.waitUntilEmpty();
    dropped.end({ discard: true });
    await empty;
    expect(text(dropped.shift())).toBeUndefined();
    expect(await dropped.pushWhenRoom(bytes('b'))).toBe(false);
  });
});
