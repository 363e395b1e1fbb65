import { fetchBlockedPorts } from './blocked-ports.js';
import { AgentError } from '@tether/protocol';
import {
  type RequestSubject,
  answerLostError,
  errorFromResponse,
  invalidResponseError,
  requestAbortedError,
  requestNotSentError,
  requestTimeoutError,
  unreachableError,
} from './client-errors.js';
import { type RequestDeadline, startDeadline } from './request-deadline.js';

/** How the client reaches one daemon: where, with which token, through which fetch. */
export interface DaemonConnection {
  /** The daemon's base URL, without a trailing slash (kept as given, so a path prefix survives). */
  readonly url: string;
  readonly token: string;
  readonly fetch: typeof fetch;
}

export function createDaemonConnection(url: string, token: string, fetchFunction?: typeof fetch): DaemonConnection {
  return {
    url: checkDaemonUrl(url).replace(/\/+$/, ''),
    token: checkToken(token),
    // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    fetch: fetchFunction ?? ((input, init) => globalThis.fetch(input, init)),
  };
}

/**
 * Checked once, here: fetch would refuse either on every call with a TypeError that reads as "not
 * reachable" (and a subscription would retry it forever), and a header's TypeError quotes the token.
 */
function checkDaemonUrl(url: unknown): string {
  const parsed = typeof url === 'string' && URL.canParse(url) ? new URL(url) : null;
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) {
    // Every path is appended to it: a query or fragment would swallow them (the page's own index.html answered).
    if (parsed.search !== '' || parsed.hash !== '')
      throw invalidUrl(
        `url is the daemon's address alone, with no query or fragment (e.g. http://127.0.0.1:7437), not ${JSON.stringify(url)}.`,
      );
    const port = Number(parsed.port || (parsed.protocol === 'https:' ? 443 : 80));
    if (fetchBlockedPorts.has(port))
      throw invalidUrl(
        `fetch refuses to connect to port ${port} (one of the Fetch standard's "bad ports", refused by browsers too), whatever listens there. Start tether serve on another port (--port).`,
      );
    return url as string;
  }
  throw invalidUrl(
    `url must be the daemon's address with its scheme, e.g. http://127.0.0.1:7437 (what \`tether serve\` prints), not ${JSON.stringify(String(url))}.`,
  );
}

function invalidUrl(message: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason: 'invalid_url' } });
}

/** A bearer token is printable ASCII with no space: anything else is a paste gone wrong (never quoted back). */
function checkToken(given: unknown): string {
  // As read from the token file (docs/api.md), with its line break.
  const token = typeof given === 'string' ? given.trim() : given;
  if (typeof token === 'string' && /^[\x21-\x7e]+$/.test(token)) return token;
  throw new AgentError({
    code: 'invalid_command',
    message:
      typeof token === 'string' && token.length > 0
        ? "token holds a space, a line break or a character that is not plain ASCII, so it cannot be the daemon's: copy it again as `tether token` prints it."
        : "token is missing: pass the daemon's token (`tether token` prints it).",
    details: { reason: 'invalid_token' },
  });
}

export interface DaemonRequest {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Path and query, starting with "/". */
  readonly path: string;
  readonly body?: unknown;
  /** Public routes (/health) are sent without the token. */
  readonly authenticated?: boolean;
  /** Error statuses whose JSON body is an answer, not an error (/health's 503: a daemon there, unhealthy). */
  readonly answerStatuses?: readonly number[];
  /** How long the whole exchange (answer and body) may take, in ms; Infinity for no limit. */
  readonly timeoutMs: number;
  readonly limitOption: RequestSubject['limitOption'];
  /** The caller's signal: aborting it abandons the exchange. */
  readonly signal?: AbortSignal | undefined;
  /** Set for POST /v1/commands: whose commandId a retry should reuse. */
  readonly command?: RequestSubject['command'];
}

function subjectOf(request: DaemonRequest): RequestSubject {
  return {
    description: `${request.method} ${request.path.split('?')[0]}`,
    limitOption: request.limitOption,
    ...(request.command === undefined ? {} : { command: request.command }),
  };
}

/**
 * Runs one exchange under its deadline: whatever breaks it once the time limit passed or the
 * caller aborted is reported as that, not as the network error the abort itself caused.
 */
async function withDeadline<T>(
  connection: DaemonConnection,
  request: DaemonRequest,
  exchange: (deadline: RequestDeadline) => Promise<T>,
): Promise<T> {
  if (request.signal?.aborted) throw requestNotSentError(connection.url, subjectOf(request), request.signal.reason);
  const deadline = startDeadline(request.timeoutMs, request.signal);
  try {
    return await exchange(deadline);
  } catch (error) {
    const cause = deadline.cause();
    if (cause === 'timeout') throw requestTimeoutError(connection.url, subjectOf(request), deadline.timeoutMs);
    if (cause === 'aborted') throw requestAbortedError(connection.url, subjectOf(request), request.signal?.reason);
    throw error;
  } finally {
    deadline.finish();
  }
}

/** The system errors of a connection that was never made: nothing of the request reached a daemon. */
const connectionNotMade = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** How a failed fetch went: never connected, the connection lost once the request was out, or unknown (a browser's). */
function failedFetch(error: unknown): 'not_connected' | 'lost' | 'unknown' {
  const cause = (error as { cause?: unknown } | null)?.cause as { code?: unknown; syscall?: unknown } | undefined;
  if (cause === undefined || cause === null) return 'unknown';
  if (cause.syscall === 'connect' || cause.syscall === 'getaddrinfo') return 'not_connected';
  return typeof cause.code === 'string' && connectionNotMade.has(cause.code) ? 'not_connected' : 'lost';
}

/** Sends one request; answers the response when it is a success, else throws the AgentError it stands for. */
async function fetchAnswer(
  connection: DaemonConnection,
  request: DaemonRequest,
  accept: string,
  signal: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = { accept };
  if (request.authenticated !== false) headers.authorization = `Bearer ${connection.token}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await connection.fetch(`${connection.url}${request.path}`, {
      method: request.method,
      headers,
      signal,
      ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
    });
  } catch (error) {
    // A browser's fetch says nothing of why (a daemon that is down and a connection reset look alike):
    // "not reachable", the likelier, and for a command how to send it again safely.
    const failure = failedFetch(error);
    if (failure === 'lost') throw answerLostError(connection.url, subjectOf(request), error);
    throw unreachableError(connection.url, error, failure === 'unknown' ? request.command : undefined);
  }
  if (!response.ok && !request.answerStatuses?.includes(response.status))
    throw await errorFromResponse(response, connection.url);
  return response;
}

/** Sends one request; answers the parsed JSON body (undefined for 204), or throws an AgentError. */
export function sendRequest(connection: DaemonConnection, request: DaemonRequest): Promise<unknown> {
  return withDeadline(connection, request, async (deadline) => {
    const response = await fetchAnswer(connection, request, 'application/json', deadline.signal);
    if (response.status === 204) return undefined;
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw answerLostError(connection.url, subjectOf(request), error);
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw invalidResponseError(
        connection.url,
        `a body that is not JSON (${request.method} ${request.path.split('?')[0]})`,
      );
    }
  });
}

/** A GET whose answer is bytes (a blob): the body and its Content-Type, or an AgentError. */
export function readBytes(
  connection: DaemonConnection,
  request: DaemonRequest,
): Promise<{ contentType: string; bytes: Uint8Array }> {
  return withDeadline(connection, request, async (deadline) => {
    const response = await fetchAnswer(connection, request, '*/*', deadline.signal);
    try {
      return {
        contentType: response.headers.get('content-type') ?? '',
        bytes: new Uint8Array(await response.arrayBuffer()),
      };
    } catch (error) {
      throw answerLostError(connection.url, subjectOf(request), error);
    }
  });
}
