import { type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordingLogger } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { NotificationMetrics } from './notification-metrics.js';
import { ReceiverQueue, defaultDeliverySettings } from './receiver-queue.js';
import { webhookSender } from './webhook-sender.js';

const silent = { debug() {}, info() {}, warn() {}, error() {} };
const stalled: ServerResponse[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const response of stalled.splice(0)) response.destroy();
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A receiver that takes requests and never answers; resolves each arrival's delivery id in order. */
async function stallingReceiver(): Promise<{ url: URL; arrived: string[]; next(): Promise<void> }> {
  const arrived: string[] = [];
  let wake: () => void = () => undefined;
  const server = createServer((request, response) => {
    arrived.push(String(request.headers['x-tether-delivery']));
    stalled.push(response);
    wake();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`),
    arrived,
    next: () =>
      new Promise<void>((resolve) => {
        wake = resolve;
      }),
  };
}

const notification = (id: string) => ({ id, kind: 'run_completed', body: '{}', eventAt: Date.now() });

describe('a receiver queue', () => {
  it('delivers 4 at a time, keeps queueLimit waiting, drops the oldest past it and counts it', async () => {
    const receiver = await stallingReceiver();
    const metrics = new NotificationMetrics(['slow']);
    const queue = new ReceiverQueue(
      { name: 'slow', send: webhookSender(receiver.url, 'secret-0123456789abcdef') },
      { ...defaultDeliverySettings, queueLimit: 2 },
      metrics,
      silent,
    );
    let fourArrived = receiver.next();
    for (const id of ['a', 'b', 'c', 'd']) queue.push(notification(id));
    while (receiver.arrived.length < 4) {
      await fourArrived;
      fourArrived = receiver.next();
    }
    // Four in flight and stalled; the queue holds two more, and a third pushes the oldest waiting out.
    for (const id of ['e', 'f', 'g']) queue.push(notification(id));
    const figures = async () => {
      const text = await metrics.registry.metrics();
      const value = (name: string) => Number(new RegExp(`^${name}\\{receiver="slow"\\} (\\S+)$`, 'm').exec(text)?.[1]);
      return { dropped: value('tether_notifications_dropped_total'), pending: value('tether_notifications_pending') };
    };
    expect(await figures()).toEqual({ dropped: 1, pending: 6 });
    expect([...receiver.arrived].sort()).toEqual(['a', 'b', 'c', 'd']);

    // Closing drops what is left (4 in flight, 2 waiting), counted too.
    queue.close();
    expect(await figures()).toEqual({ dropped: 7, pending: 0 });
  });

  it('logs the first drop and the first refusal of a minute, and counts the rest in one line each at close', async () => {
    const stalling = await stallingReceiver();
    const { logger, lines } = recordingLogger();
    const full = new ReceiverQueue(
      { name: 'slow', send: webhookSender(stalling.url, 'secret-0123456789abcdef') },
      { ...defaultDeliverySettings, queueLimit: 1 },
      new NotificationMetrics(['slow']),
      logger,
    );
    // Four in flight, one waiting: each of the 20 after them pushes the oldest waiting out.
    for (let index = 0; index < 25; index += 1) full.push(notification(`n${index}`));

    const refusing = createServer((_request, response) => response.writeHead(400).end());
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => refusing.close(() => resolve())));
    const metrics = new NotificationMetrics(['strict']);
    const refused = new ReceiverQueue(
      {
        name: 'strict',
        send: webhookSender(
          new URL(`http://127.0.0.1:${(refusing.address() as AddressInfo).port}/`),
          'secret-0123456789abcdef',
        ),
      },
      defaultDeliverySettings,
      metrics,
      logger,
    );
    for (let index = 0; index < 10; index += 1) refused.push(notification(`r${index}`));
    await expect
      .poll(async () =>
        /tether_notifications_failed_total\{receiver="strict"\} 10$/m.test(await metrics.registry.metrics()),
      )
      .toBe(true);

    expect(lines.map((line) => [line.level, line.message])).toEqual([
      ['warn', 'notification queue full: the oldest was dropped'],
      ['warn', 'a receiver refused a notification'],
    ]);
    full.close();
    refused.close();
    expect(lines.slice(2)).toEqual([
      {
        level: 'warn',
        fields: { receiver: 'slow', notifications: 19, since: expect.any(String), until: expect.any(String) },
        message: '19 more notifications dropped from a full queue, counted, not logged one by one',
      },
      {
        level: 'warn',
        fields: { receiver: 'strict', notifications: 9, since: expect.any(String), until: expect.any(String) },
        message: '9 more notifications refused by the receiver, counted, not logged one by one',
      },
    ]);
  });
});
