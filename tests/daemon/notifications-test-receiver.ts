import { createHmac, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedNotification {
  readonly headers: IncomingMessage['headers'];
  readonly raw: string;
  readonly body: Record<string, unknown> & { kind: string; links: Record<string, string> };
}

/** How the receiver answers: at once with a status, or never (until closed), like a stalled service. */
export type ReceiverBehaviour = { readonly status: number } | 'stall';

/** What a test server received, in order, and a way to wait for one that matches. */
export class Arrivals<Item> {
  readonly received: Item[] = [];
  private waiters: Array<() => void> = [];

  /** The first arrival that matches, waiting for it. */
  async waitFor(match: (item: Item) => boolean): Promise<Item> {
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  protected record(item: Item): void {
    this.received.push(item);
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** A notification receiver on 127.0.0.1 that records every POST and lets a test wait for one. */
export class TestReceiver extends Arrivals<ReceivedNotification> {
  private readonly stalled: ServerResponse[] = [];

  readonly url: string;
  private readonly server: Server;

  private constructor(server: Server, url: string) {
    super();
    this.server = server;
    this.url = url;
  }

  static async start(behaviour: ReceiverBehaviour = { status: 200 }): Promise<TestReceiver> {
    let receiver: TestReceiver | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        receiver!.record({ headers: request.headers, raw, body: JSON.parse(raw) as ReceivedNotification['body'] });
        if (behaviour === 'stall') receiver!.stalled.push(response);
        else response.writeHead(behaviour.status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new TestReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
    return receiver;
  }

  async close(): Promise<void> {
    for (const response of this.stalled) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A URL on 127.0.0.1 where nothing listens (a port bound, then released): connections are refused. */
export async function refusingUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}

/** Checks X-Tether-Signature the way a receiver should: HMAC-SHA256 of "<timestamp>.<body>", compared in constant time. */
export function signatureIsValid(notification: ReceivedNotification, secret: string): boolean {
  const timestamp = notification.headers['x-tether-timestamp'];
  const signature = notification.headers['x-tether-signature'];
  if (typeof timestamp !== 'string' || typeof signature !== 'string') return false;
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(`${timestamp}.${notification.raw}`).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** One sample's value from the Prometheus text, or undefined when it is not there. */
function metricValue(text: string, name: string, receiver: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{receiver="${receiver}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

/** A receiver's delivery figures from a /v1/metrics scrape. */
export function deliveryFigures(text: string, receiver: string) {
  return {
    sent: metricValue(text, 'tether_notifications_sent_total', receiver),
    failed: metricValue(text, 'tether_notifications_failed_total', receiver),
    retried: metricValue(text, 'tether_notifications_retried_total', receiver),
    dropped: metricValue(text, 'tether_notifications_dropped_total', receiver),
    pending: metricValue(text, 'tether_notifications_pending', receiver),
    delivered: metricValue(text, 'tether_notification_delivery_seconds_count', receiver),
  };
}
