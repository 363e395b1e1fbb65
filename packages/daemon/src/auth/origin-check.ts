import { AgentError } from '@tether/protocol';

/**
 * The DNS-rebinding defence. A web page on another site can make the browser talk to 127.0.0.1
 * under a name it controls; the browser then sends that name as Host. So only requests addressed
 * to a loopback name (or the host the daemon was explicitly bound to) with the daemon's own port
 * are served, and a browser Origin must be the daemon's own or one the user allowed.
 */
export interface OriginPolicy {
  readonly port: number;
  /** Host names (lower case; IPv6 in brackets) the daemon answers to, loopback names included. */
  readonly hostNames: ReadonlySet<string>;
  /** Normalized origins ("http://host:port") allowed besides the daemon's own; CORS is sent for these. */
  readonly allowOrigins: ReadonlySet<string>;
  /**
   * The address the daemon was told people and clients reach it at (advertiseUrl: a proxy, a name on
   * the network): its Host header values (lower case, with and without the default port) and its
   * origin, the daemon's own too. Its owner chose that name, so a rebinding page cannot send it.
   */
  readonly advertised: { readonly hosts: ReadonlySet<string>; readonly origin: string } | null;
}

// The names a Host header may give the daemon by (with its port): the literal ones of loopback, not all of 127.0.0.0/8.
const loopbackHostNames = ['127.0.0.1', 'localhost', '[::1]'] as const;

const wildcardHosts = new Set(['0.0.0.0', '::', '[::]', '']);

/** A host as it appears in a Host header or URL: IPv6 in brackets, lower case. */
export function hostNameForUrl(host: string): string {
  const lower = host.toLowerCase();
  return lower.includes(':') && !lower.startsWith('[') ? `[${lower}]` : lower;
}

/** Whether binding to `host` listens on every interface. */
export function isWildcardHost(host: string): boolean {
  return wildcardHosts.has(host.toLowerCase());
}

/** An origin in the form browsers send ("scheme://host[:port]"), or null when it is not a valid http(s) origin. */
export function normalizeOrigin(origin: string): string | null {
  try {
    const url = new URL(origin);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.origin;
  } catch {
    return null;
  }
}

function invalidOption(message: string, reason: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}

/** The Host header values and the origin of the advertised URL; null when there is none. */
function advertisedAddress(advertiseUrl: string | undefined): OriginPolicy['advertised'] {
  if (advertiseUrl === undefined) return null;
  const origin = normalizeOrigin(advertiseUrl);
  // The value is not repeated: it may hold a password, and this message may end up in a log.
  if (origin === null || /^[^/]*\/\/[^/?#]*@/.test(advertiseUrl))
    throw invalidOption(
      'advertiseUrl must be an http:// or https:// URL with no user or password (e.g. http://10.0.0.5:7437), the address clients and the people notified reach this daemon at.',
      'invalid_advertiseUrl',
    );
  const url = new URL(origin);
  const defaultPort = url.protocol === 'https:' ? '443' : '80';
  return { hosts: new Set([url.host, `${url.hostname}:${url.port || defaultPort}`]), origin };
}

export function createOriginPolicy(options: {
  port: number;
  boundHost: string;
  interfaceAddresses?: readonly string[];
  allowOrigins?: readonly string[];
  advertiseUrl?: string;
}): OriginPolicy {
  const hostNames = new Set<string>(loopbackHostNames);
  if (isWildcardHost(options.boundHost)) {
    for (const address of options.interfaceAddresses ?? []) hostNames.add(hostNameForUrl(address));
  } else {
    hostNames.add(hostNameForUrl(options.boundHost));
  }
  const allowOrigins = new Set<string>();
  for (const origin of options.allowOrigins ?? []) {
    const normalized = normalizeOrigin(origin);
    if (normalized === null)
      throw invalidOption(
        `allowOrigins: "${origin.slice(0, 200)}" is not an http(s) origin such as "http://localhost:5173".`,
        'invalid_allowOrigins',
      );
    allowOrigins.add(normalized);
  }
  return { port: options.port, hostNames, allowOrigins, advertised: advertisedAddress(options.advertiseUrl) };
}

/** Splits "name:port" (IPv6 in brackets); null when the header is not of that form. */
function splitHostHeader(value: string): { name: string; port: string } | null {
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]]+):(\d{1,5})$/i.exec(value.trim());
  return match ? { name: match[1]!.toLowerCase(), port: match[2]! } : null;
}

/** Whether a Host header names this daemon: a known host name with its port. */
export function isAllowedHost(hostHeader: string | null | undefined, policy: OriginPolicy): boolean {
  if (!hostHeader) return false;
  if (policy.advertised?.hosts.has(hostHeader.trim().toLowerCase())) return true;
  const host = splitHostHeader(hostHeader);
  return host !== null && Number(host.port) === policy.port && policy.hostNames.has(host.name);
}

export type OriginVerdict = 'absent' | 'own' | 'allowed' | 'refused';

/** How to treat a request's Origin header: none (not a browser, or same-origin GET), the daemon's own, an allowed one, or refused. */
export function judgeOrigin(originHeader: string | null | undefined, policy: OriginPolicy): OriginVerdict {
  if (originHeader === null || originHeader === undefined) return 'absent';
  const origin = normalizeOrigin(originHeader);
  if (origin === null) return 'refused';
  if (policy.allowOrigins.has(origin)) return 'allowed';
  if (origin === policy.advertised?.origin) return 'own';
  const url = new URL(origin);
  return url.protocol === 'http:' &&
    Number(url.port) === policy.port &&
    policy.hostNames.has(url.hostname.toLowerCase())
    ? 'own'
    : 'refused';
}

/** The whole check for one request: true when it may proceed. */
export function passesOriginPolicy(
  headers: { host: string | null | undefined; origin: string | null | undefined },
  policy: OriginPolicy,
): boolean {
  return isAllowedHost(headers.host, policy) && judgeOrigin(headers.origin, policy) !== 'refused';
}
