/** What a receiver can be told about; each kind is one notification body (docs/notifications.md). */
export const notificationKinds = ['interaction_requested', 'run_completed', 'run_failed', 'session_waiting'] as const;
export type NotificationKind = (typeof notificationKinds)[number];

/** The kinds a receiver gets when it names none (session_waiting needs a threshold, so it is asked for). */
export const defaultNotificationKinds: readonly NotificationKind[] = [
  'interaction_requested',
  'run_completed',
  'run_failed',
];

/** One place the daemon POSTs notifications to. */
export interface NotificationReceiver {
  /** https://…, or http:// to a loopback address (any other plain-http host needs allowPlainHttp). */
  readonly url: string;
  /** Default: interaction_requested, run_completed, run_failed. */
  readonly events?: readonly NotificationKind[];
  /** The HMAC key of X-Tether-Signature (16 characters at least); default: the data dir's notification-secret. */
  readonly secret?: string;
  /** session_waiting: how long an interaction stays unanswered before it is sent (default 300 s). */
  readonly sessionWaitingSeconds?: number;
  /** The receiver's label in /v1/metrics (default "<position>-<host>": never the URL, whose path may hold a key). */
  readonly name?: string;
}

/** How hard the daemon tries to deliver; the defaults suit people, the knobs suit tests. */
export interface NotificationDeliveryOptions {
  /** Attempts per notification, the first included (default 5). */
  readonly attempts?: number;
  /** Wait before the first retry; each next one doubles, cut by up to half by jitter (default 4,000 ms: 5 attempts span about a minute). */
  readonly firstRetryMs?: number;
  /** One attempt's time limit (default 10,000 ms). */
  readonly attemptTimeoutMs?: number;
  /** Notifications waiting per receiver; past it the oldest is dropped and counted (default 100). */
  readonly queueLimit?: number;
}

/** Web Push to the browsers where someone enabled notifications in the web UI (docs/notifications.md). */
export interface WebPushOptions {
  /** Who runs this daemon, for the push services (VAPID's `sub`): a mailto: or https: URL. Required: it turns Web Push on. */
  readonly subject: string;
  /** The kinds pushed (default: interaction_requested, run_completed, run_failed). */
  readonly events?: readonly NotificationKind[];
  /** session_waiting's threshold for pushes (default 300 s). */
  readonly sessionWaitingSeconds?: number;
  /** How long a push service keeps a message for a browser that is offline (TTL header; default 3,600 s, the links' lifetime). */
  readonly ttlSeconds?: number;
  /** Browsers registered at most (default 20); past it a new one is refused with capacity_exceeded. */
  readonly maxSubscriptions?: number;
  /** Tests only: accept subscription endpoints on http:// to this machine (a local stand-in for a push service). */
  readonly allowLoopbackHttpEndpoints?: boolean;
}

export interface NotificationOptions {
  /** Receivers given directly (e.g. `tether serve --notify URL`). */
  readonly receivers?: readonly NotificationReceiver[];
  /** A JSON file of receivers (docs/notifications.md), read and checked at start. */
  readonly configFile?: string;
  /** Allow http:// receivers on hosts other than loopback (the body and links then cross the network unencrypted). */
  readonly allowPlainHttp?: boolean;
  readonly delivery?: NotificationDeliveryOptions;
  /** How long an interaction's one-time links stay usable (default 3,600,000 ms). */
  readonly linkTtlMs?: number;
  /** Web Push to browsers (off unless given; the config file's "webPush" too). */
  readonly webPush?: WebPushOptions;
}

export const defaultSessionWaitingSeconds = 300;
export const defaultLinkTtlMs = 60 * 60 * 1000;
