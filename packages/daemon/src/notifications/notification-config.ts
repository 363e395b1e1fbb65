import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import { AgentError } from '@tether/protocol';
import { z } from 'zod';
import {
  type NotificationKind,
  type NotificationOptions,
  type NotificationReceiver,
  type WebPushOptions,
  defaultNotificationKinds,
  defaultSessionWaitingSeconds,
  notificationKinds,
} from './notification-options.js';
import { type DeliverySettings, defaultDeliverySettings } from './receiver-queue.js';
import { checkReceiverUrl, receiverLabel } from './receiver-url.js';

const ReceiverEntry = z.strictObject({
  url: z.string().min(1).max(4096),
  events: z.array(z.enum(notificationKinds)).min(1).optional(),
  secret: z.string().min(16).max(512).optional(),
  sessionWaitingSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 3600)
    .optional(),
  name: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/)
    .optional(),
});

const WebPushEntry = z.strictObject({
  subject: z.string().min(1).max(512),
  events: z.array(z.enum(notificationKinds)).min(1).optional(),
  sessionWaitingSeconds: ReceiverEntry.shape.sessionWaitingSeconds,
  ttlSeconds: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 3600)
    .optional(),
  maxSubscriptions: z.number().int().min(1).max(1000).optional(),
});

/** The config file's format (docs/notifications.md). */
export const NotificationConfigFile = z.strictObject({
  allowPlainHttp: z.boolean().optional(),
  receivers: z.array(ReceiverEntry).max(32).default([]),
  webPush: WebPushEntry.optional(),
});

/** A receiver checked and with its defaults filled in. */
export interface ResolvedReceiver {
  readonly name: string;
  readonly url: URL;
  readonly kinds: ReadonlySet<NotificationKind>;
  /** null: sign with the data dir's generated secret. */
  readonly secret: string | null;
  readonly sessionWaitingMs: number;
}

function invalidConfig(message: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason: 'notification_config_invalid' } });
}

/**
 * Whoever can write the config file chooses where approvals' one-time links go (for them an approval
 * is one click), and whoever can read it has the receivers' secrets and webhook URLs: it must be its
 * owner's alone, as the data dir's files are. Null when it is (and on Windows, which has no such modes).
 */
function configFileExposure(filePath: string, stats: Stats): AgentError | null {
  if (process.platform === 'win32') return null;
  const uid = process.getuid!();
  const consequence = `whoever can write it chooses where approvals' one-time links go, and whoever can read it has the receivers' secrets and URLs`;
  if (stats.uid !== uid)
    return unsafeConfig(
      `The notification config ${filePath} is owned by uid ${stats.uid}, not by you (uid ${uid}): ${consequence}. Use a file of your own, mode 0600.`,
    );
  if ((stats.mode & 0o077) !== 0)
    return unsafeConfig(
      `The notification config ${filePath} is readable or writable by other users (mode 0${(stats.mode & 0o777).toString(8)}): ${consequence}. Check its receivers, then run \`chmod 600 ${filePath}\`.`,
    );
  return null;
}

function unsafeConfig(message: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason: 'notification_config_unsafe' } });
}

/** The file's text, judged and read through one descriptor (no swap between the check and the read). */
async function readPrivateConfig(filePath: string): Promise<string> {
  let text: string;
  try {
    const file = await open(filePath, 'r');
    try {
      const exposure = configFileExposure(filePath, await file.stat());
      if (exposure !== null) throw exposure;
      text = await file.readFile('utf8');
    } finally {
      await file.close();
    }
  } catch (error) {
    if (AgentError.isInstance(error)) throw error;
    throw invalidConfig(
      `The notification config ${filePath} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}). Check the path given (tether serve --notify-config), and that it names a file this user can read.`,
    );
  }
  return text;
}

async function readConfigFile(filePath: string): Promise<z.infer<typeof NotificationConfigFile>> {
  const text = await readPrivateConfig(filePath);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalidConfig(`The notification config ${filePath} is not JSON; see docs/notifications.md for its format.`);
  }
  const parsed = NotificationConfigFile.safeParse(json);
  if (!parsed.success) {
    // Paths and messages only: a value may be a secret.
    const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top)'}: ${issue.message}`);
    throw invalidConfig(
      `The notification config ${filePath} is not valid (${issues.slice(0, 5).join('; ')}); see docs/notifications.md.`,
    );
  }
  return parsed.data;
}

/** Web Push, checked and with its defaults filled in; null when off. */
export interface ResolvedWebPush {
  readonly subject: string;
  readonly kinds: ReadonlySet<NotificationKind>;
  readonly sessionWaitingMs: number;
  readonly ttlSeconds: number;
  readonly maxSubscriptions: number;
  readonly allowLoopbackHttpEndpoints: boolean;
}

export interface ResolvedNotifications {
  readonly receivers: readonly ResolvedReceiver[];
  readonly settings: DeliverySettings;
  readonly webPush: ResolvedWebPush | null;
}

const defaultPushTtlSeconds = 3600;
const defaultMaxSubscriptions = 20;

function checkKinds(kinds: ReadonlySet<string>, where: string): void {
  for (const kind of kinds)
    if (!(notificationKinds as readonly string[]).includes(kind))
      throw invalidConfig(`${where}: "${kind}" is not an event kind; use ${notificationKinds.join(', ')}.`);
}

function positiveSeconds(value: number, where: string, name: string): number {
  if (!Number.isFinite(value) || value <= 0)
    throw invalidConfig(`${where}: ${name} must be a positive number of seconds.`);
  return value;
}

function resolveWebPush(options: WebPushOptions, where: string): ResolvedWebPush {
  const subject = options.subject;
  // RFC 8292 §2.1: the push service's operator contacts the sender through it.
  if (!/^mailto:[^\s@]+@[^\s@]+$/.test(subject) && !/^https:\/\/[^\s]+$/.test(subject))
    throw invalidConfig(
      `${where}: subject must be a mailto: or https: URL the push services can contact you at (for example "mailto:you@example.com").`,
    );
  const kinds = new Set(options.events ?? defaultNotificationKinds);
  checkKinds(kinds, where);
  const ttlSeconds = options.ttlSeconds ?? defaultPushTtlSeconds;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 0)
    throw invalidConfig(`${where}: ttlSeconds must be a whole number of seconds, 0 or more.`);
  const maxSubscriptions = options.maxSubscriptions ?? defaultMaxSubscriptions;
  if (!Number.isInteger(maxSubscriptions) || maxSubscriptions < 1 || maxSubscriptions > 1000)
    throw invalidConfig(`${where}: maxSubscriptions must be a whole number from 1 to 1,000.`);
  return {
    subject,
    kinds,
    sessionWaitingMs:
      positiveSeconds(options.sessionWaitingSeconds ?? defaultSessionWaitingSeconds, where, 'sessionWaitingSeconds') *
      1000,
    ttlSeconds,
    maxSubscriptions,
    allowLoopbackHttpEndpoints: options.allowLoopbackHttpEndpoints === true,
  };
}

function deliverySettings(options: NotificationOptions): DeliverySettings {
  const settings = { ...defaultDeliverySettings, ...options.delivery };
  for (const [name, value] of Object.entries(settings))
    if (!Number.isFinite(value) || value < (name === 'firstRetryMs' ? 0 : 1))
      throw invalidConfig(`notifications.delivery.${name} must be a positive number, not ${String(value)}.`);
  return settings;
}

function checkSecret(secret: string | undefined, where: string): void {
  if (secret !== undefined && (secret.length < 16 || secret.length > 512))
    throw invalidConfig(`${where}: a secret must be 16 to 512 characters long.`);
}

/**
 * Every receiver, from the options and the config file, checked before the daemon opens anything:
 * a bad receiver stops the start with a message that says what to change.
 */
export async function resolveNotifications(options: NotificationOptions | undefined): Promise<ResolvedNotifications> {
  if (options === undefined) return { receivers: [], settings: defaultDeliverySettings, webPush: null };
  const settings = deliverySettings(options);
  if (options.linkTtlMs !== undefined && (!Number.isFinite(options.linkTtlMs) || options.linkTtlMs < 1000))
    throw invalidConfig(`notifications.linkTtlMs must be at least 1,000 ms, not ${String(options.linkTtlMs)}.`);
  const given: Array<{ entry: NotificationReceiver; where: string }> = (options.receivers ?? []).map(
    (entry, index) => ({ entry, where: `Notification receiver ${index + 1}` }),
  );
  let allowPlainHttp = options.allowPlainHttp === true;
  let webPush = options.webPush === undefined ? null : resolveWebPush(options.webPush, 'notifications.webPush');
  if (options.configFile !== undefined) {
    const file = await readConfigFile(options.configFile);
    allowPlainHttp ||= file.allowPlainHttp === true;
    // The host's own options win over the file's.
    if (webPush === null && file.webPush !== undefined)
      webPush = resolveWebPush(file.webPush, `webPush of ${options.configFile}`);
    file.receivers.forEach((entry, index) =>
      given.push({ entry, where: `Receiver ${index + 1} of ${options.configFile}` }),
    );
  }
  const names = new Set<string>();
  const receivers = given.map(({ entry, where }, index) => {
    const url = checkReceiverUrl(entry.url, where, allowPlainHttp);
    checkSecret(entry.secret, where);
    const kinds = new Set(entry.events ?? defaultNotificationKinds);
    checkKinds(kinds, where);
    const name = entry.name ?? receiverLabel(url, index + 1);
    if (names.has(name)) throw invalidConfig(`${where}: the name "${name}" is taken by another receiver.`);
    names.add(name);
    const waitingSeconds = positiveSeconds(
      entry.sessionWaitingSeconds ?? defaultSessionWaitingSeconds,
      where,
      'sessionWaitingSeconds',
    );
    return { name, url, kinds, secret: entry.secret ?? null, sessionWaitingMs: waitingSeconds * 1000 };
  });
  return { receivers, settings, webPush };
}
