import type { DaemonLogger } from './create-logger.js';
import { RepeatLog, type RepeatLogOptions } from './repeat-log.js';

/**
 * The refusals anyone who can reach the port can cause as fast as they like, each counted on its own:
 * a flood of one kind must not hide another. `fields` go on every line of the kind; `what` names
 * them in the line that counts them.
 */
const refusalKinds = {
  /** A request under /v1 without a valid token. */
  unauthorized: {
    fields: { status: 401, errorCode: 'unauthorized' },
    what: 'requests refused without a valid token (401)',
  },
  /** A request or a WebSocket upgrade whose Host or Origin is not this daemon's (the DNS-rebinding check). */
  foreign_host_or_origin: {
    fields: { status: 403 },
    what: 'requests and WebSocket upgrades refused for a foreign Host or Origin (403)',
  },
  /** A WebSocket closed before it showed the token: a wrong one, no auth frame in time, or another frame. */
  websocket_unauthorized: {
    fields: { closeCode: 4401, errorCode: 'unauthorized' },
    what: 'WebSockets closed without a valid auth frame (4401)',
  },
  /** A path no route answers (404 route_not_found): the web UI's paths need no token, so anyone can ask any. */
  route_not_found: {
    fields: { status: 404, errorCode: 'route_not_found' },
    what: 'requests for a path no route answers (404)',
  },
  /** A method a path does not take (405): /health and the web UI's paths need no token, so anyone can send any. */
  method_not_allowed: {
    fields: { status: 405, errorCode: 'method_not_allowed' },
    what: 'requests with a method their path does not take (405)',
  },
  /** A one-time link that was used, expired or never was (410): the links need no token, so anyone can try any. */
  link_unavailable: {
    fields: { status: 410, errorCode: 'link_unavailable' },
    what: 'requests for one-time links that were used, expired or never made (410)',
  },
  /** A WebSocket upgrade refused because too many sockets already wait to show the token. */
  websocket_too_many_waiting: {
    fields: { status: 503 },
    what: 'WebSocket upgrades refused while too many sockets waited for their auth frame (503)',
  },
  /** A WebSocket upgrade refused because streams and sockets already fill their share of the connections. */
  too_many_streams: {
    fields: { status: 429, errorCode: 'capacity_exceeded' },
    what: 'WebSocket upgrades refused while streams and sockets filled their share of the connections (429)',
  },
} as const;

export type RefusalKind = keyof typeof refusalKinds;

/**
 * What a logged refusal may carry: none of it is taken from the path, the query or a header
 * (`route` is the route's pattern, `reason` the daemon's own words).
 */
interface RefusalFields {
  readonly method?: string;
  readonly route: string;
  readonly durationMs?: number;
  readonly reason?: string;
}

/**
 * The log of refusals, rate-limited per kind (refusalKinds, through a RepeatLog): any local process
 * can cause them as fast as it likes, and a line each would fill the log. The first refusal of a kind
 * in an interval is logged as the line it would have been (`message`: "request", "upgrade", …); the
 * ones after it in the interval are only counted, and one `warn` line says how many there were, of
 * which kind, from when to when: written when the interval ends, or by flush() (at shutdown). The requests counter (tether_http_requests_total) still counts every one as
 * it happens.
 */
export class RefusedRequestLog {
  private readonly logger: DaemonLogger;
  private readonly repeats: RepeatLog<RefusalKind>;

  constructor(logger: DaemonLogger, options: RepeatLogOptions = {}) {
    this.logger = logger;
    this.repeats = new RepeatLog(({ key, counted, since, until }) => {
      const { fields, what } = refusalKinds[key];
      this.logger.warn(
        { ...fields, refusal: key, refused: counted, since, until },
        `${what}: ${counted} more, counted, not logged one by one`,
      );
    }, options);
  }

  refused(kind: RefusalKind, fields: RefusalFields, message: string): void {
    if (this.repeats.occurred(kind)) this.logger.info({ ...fields, ...refusalKinds[kind].fields }, message);
  }

  /** Writes the count of the refusals not logged yet, if any, one line per kind. */
  flush(): void {
    this.repeats.flush();
  }
}
