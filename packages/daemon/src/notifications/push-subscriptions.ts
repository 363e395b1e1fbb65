import { createHash, createPublicKey } from 'node:crypto';
import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { ensureDataDirectory, readPrivateDataFile } from '@tether/store-sqlite';
import { z } from 'zod';
import { writePrivateFile } from '../auth/private-files.js';
import { isLoopbackHost } from '../auth/loopback-host.js';

export const pushSubscriptionsFileName = 'web-push-subscriptions.json';

const base64Url = z.string().regex(/^[A-Za-z0-9_-]+={0,2}$/);

/** What the web UI sends: the browser's PushSubscription.toJSON(). */
export const PushSubscriptionInput = z.object({
  endpoint: z.string().min(1).max(2048),
  expirationTime: z.number().nullable().optional(),
  keys: z.object({ p256dh: base64Url.max(128), auth: base64Url.max(64) }),
});

const StoredSubscription = z.object({
  id: z.string(),
  endpoint: z.string(),
  keys: z.object({ p256dh: z.string(), auth: z.string() }),
  createdAt: z.string(),
});
const StoredFile = z.object({ version: z.literal(1), subscriptions: z.array(StoredSubscription) });

/** A browser that asked for notifications: where its push service takes messages, and the keys to encrypt them for it. */
export type PushSubscription = z.infer<typeof StoredSubscription>;

function invalidSubscription(message: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason: 'push_subscription_invalid' } });
}

/** A subscription's id: derived from its endpoint (a capability URL, never logged), so registering it again is the same one. */
function subscriptionId(endpoint: string): string {
  return `psub_${createHash('sha256').update(endpoint).digest('hex').slice(0, 24)}`;
}

/** The endpoint, checked: https (the message and its links cross the network), http only to this machine when a test allowed it. */
function checkEndpoint(value: string, allowLoopbackHttp: boolean): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidSubscription(
      'The subscription endpoint is not a URL; send the PushSubscription the browser returned.',
    );
  }
  if (url.username !== '' || url.password !== '')
    throw invalidSubscription('The subscription endpoint holds a user or password; a push service endpoint has none.');
  const loopbackHttp = url.protocol === 'http:' && allowLoopbackHttp && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !loopbackHttp)
    throw invalidSubscription('The subscription endpoint must be an https:// URL (a browser push service).');
  return url;
}

function checkKeys(keys: { p256dh: string; auth: string }): void {
  const auth = Buffer.from(keys.auth, 'base64url');
  if (auth.length !== 16) throw invalidSubscription('keys.auth must be 16 bytes (base64url), as the browser gives it.');
  const point = Buffer.from(keys.p256dh, 'base64url');
  const coordinate = (from: number) => point.subarray(from, from + 32).toString('base64url');
  try {
    if (point.length !== 65 || point[0] !== 4) throw new Error('not an uncompressed point');
    // Importing checks that the point is on the curve: a bad one would fail every message later.
    createPublicKey({ key: { kty: 'EC', crv: 'P-256', x: coordinate(1), y: coordinate(33) }, format: 'jwk' });
  } catch {
    throw invalidSubscription('keys.p256dh must be an uncompressed P-256 public key (65 bytes, base64url).');
  }
}

/**
 * The browsers registered for Web Push, in the data dir (0600, written whole and renamed, so a crash
 * leaves the old list or the new one). Bounded: past maxSubscriptions a new browser is refused.
 */
export class PushSubscriptionStore {
  private readonly byId = new Map<string, PushSubscription>();
  private writing: Promise<void> = Promise.resolve();

  private readonly filePath: string;
  private readonly limits: { readonly maxSubscriptions: number; readonly allowLoopbackHttp: boolean };

  private constructor(filePath: string, limits: PushSubscriptionStore['limits']) {
    this.filePath = filePath;
    this.limits = limits;
  }

  /** The stored list; a file that is not ours alone fails the start (data_dir_unsafe), an unreadable one starts empty. */
  static open(dataDir: string, limits: PushSubscriptionStore['limits']): PushSubscriptionStore {
    const store = new PushSubscriptionStore(path.join(path.resolve(dataDir), pushSubscriptionsFileName), limits);
    const text = readPrivateDataFile(
      store.filePath,
      'Delete it: browsers then enable notifications again from the web UI.',
    );
    if (text === null) return store;
    try {
      const parsed = StoredFile.safeParse(JSON.parse(text));
      if (parsed.success)
        for (const subscription of parsed.data.subscriptions) store.byId.set(subscription.id, subscription);
    } catch {
      // Unreadable: start empty; the next registration writes a good file.
    }
    return store;
  }

  list(): PushSubscription[] {
    return [...this.byId.values()];
  }

  /** Registers a browser (again: the same id, its keys refreshed). Bad input changes nothing. */
  async add(input: unknown): Promise<{ subscription: PushSubscription; created: boolean }> {
    const parsed = PushSubscriptionInput.safeParse(input);
    if (!parsed.success)
      throw invalidSubscription(
        'Send {"endpoint", "keys": {"p256dh", "auth"}}: the JSON of the PushSubscription the browser returned.',
      );
    const endpoint = checkEndpoint(parsed.data.endpoint, this.limits.allowLoopbackHttp).href;
    checkKeys(parsed.data.keys);
    const id = subscriptionId(endpoint);
    const created = !this.byId.has(id);
    if (created && this.byId.size >= this.limits.maxSubscriptions)
      throw new AgentError({
        code: 'capacity_exceeded',
        message: `${this.limits.maxSubscriptions} browsers are registered for notifications already: disable them in a browser that has them, or raise webPush.maxSubscriptions.`,
        details: { reason: 'push_subscriptions_full' },
      });
    const subscription: PushSubscription = {
      id,
      endpoint,
      keys: { p256dh: parsed.data.keys.p256dh, auth: parsed.data.keys.auth },
      createdAt: this.byId.get(id)?.createdAt ?? new Date().toISOString(),
    };
    const previous = this.byId.get(id);
    this.byId.set(id, subscription);
    try {
      await this.save();
    } catch (error) {
      if (previous === undefined) this.byId.delete(id);
      else this.byId.set(id, previous);
      throw error;
    }
    return { subscription, created };
  }

  /** Forgets a browser by its endpoint (the web UI unsubscribing); null when it was not registered. */
  async removeEndpoint(endpoint: unknown): Promise<PushSubscription | null> {
    if (typeof endpoint !== 'string') throw invalidSubscription('Send {"endpoint"}: the subscription to forget.');
    let href: string;
    try {
      href = new URL(endpoint).href;
    } catch {
      return null;
    }
    const found = this.byId.get(subscriptionId(href)) ?? null;
    if (found !== null) await this.remove(found.id);
    return found;
  }

  /** Forgets a browser (its push service answered 404/410: the subscription is gone). */
  async remove(id: string): Promise<void> {
    if (!this.byId.delete(id)) return;
    await this.save();
  }

  /** One write at a time, each of the whole list as it is then. */
  private save(): Promise<void> {
    const write = async () => {
      ensureDataDirectory(path.dirname(this.filePath));
      await writePrivateFile(this.filePath, `${JSON.stringify({ version: 1, subscriptions: this.list() }, null, 2)}\n`);
    };
    this.writing = this.writing.then(write, write);
    return this.writing;
  }
}
