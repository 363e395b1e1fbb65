import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { passesOriginPolicy } from '../auth/origin-check.js';
import type { DaemonState } from '../daemon-state.js';
import type { RefusalKind } from '../logging/refused-request-log.js';
import { streamsFullRetrySeconds } from '../errors/error-response.js';
import { directAnswerHeaders } from '../http/direct-answer-headers.js';
import { WebSocketConnection } from './websocket-connection.js';
import { unauthenticatedFrameMaxBytes } from './websocket-frames.js';

const route = '/v1/ws';

/**
 * Sockets that have not shown the token yet, at most. Each can hold a frame of up to
 * unauthenticatedFrameMaxBytes for authTimeoutMs; past this, new upgrades get 503 until one
 * authenticates, fails or times out. A real client authenticates within one round trip.
 */
export const maxUnauthenticatedSockets = 32;

const reasons: Record<number, string> = {
  403: 'Forbidden',
  404: 'Not Found',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** Answers an upgrade we will not take with a plain HTTP status, an empty body and the usual headers. */
function refuse(socket: Duplex, status: number, headers: Record<string, string>): void {
  const lines = Object.entries({ ...headers, Connection: 'close', 'Content-Length': '0' }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  socket.end(`HTTP/1.1 ${status} ${reasons[status]}\r\n${lines.join('')}\r\n`);
  socket.destroy();
}

/**
 * The `upgrade` side of the HTTP server: only /v1/ws, and only after the same Host/Origin check as
 * every request. The token comes in the first frame (browsers cannot set headers on a WebSocket);
 * until then a socket may send one small frame, and only a few such sockets may wait at once.
 */
export function createUpgradeHandler(state: DaemonState): {
  handle: (request: IncomingMessage, socket: Duplex, head: Buffer) => void;
  close: () => void;
} {
  // The command limit is set per socket once it authenticates (payload-limit.ts).
  const server = new WebSocketServer({ noServer: true, maxPayload: unauthenticatedFrameMaxBytes });
  let unauthenticated = 0;
  const handle = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const started = performance.now();
    const origin = Array.isArray(request.headers.origin) ? request.headers.origin[0] : request.headers.origin;
    const durationMs = () => Math.round((performance.now() - started) * 10) / 10;
    const logUpgrade = (status: number, tookMs: number) =>
      state.logger.info({ method: 'GET', route, status, durationMs: tookMs }, 'upgrade');
    // Refusals anyone can cause at will are logged rate-limited (refused-request-log.ts), the rest each.
    const refuseWith = (status: number, refusal: RefusalKind | null, extra: Record<string, string> = {}) => {
      state.metrics.countRequest(route, status);
      if (refusal === null) logUpgrade(status, durationMs());
      else state.refusals.refused(refusal, { method: 'GET', route, durationMs: durationMs() }, 'upgrade');
      refuse(socket, status, { ...directAnswerHeaders(origin, state.policy), ...extra });
    };
    socket.on('error', () => socket.destroy());
    if (!passesOriginPolicy({ host: request.headers.host, origin }, state.policy))
      return refuseWith(403, 'foreign_host_or_origin');
    if ((request.url ?? '').split('?')[0] !== route) return refuseWith(404, null);
    if (state.draining) return refuseWith(503, null);
    if (state.connections.full)
      return refuseWith(429, 'too_many_streams', { 'Retry-After': String(streamsFullRetrySeconds) });
    if (unauthenticated >= maxUnauthenticatedSockets)
      return refuseWith(503, 'websocket_too_many_waiting', { 'Retry-After': '5' });
    unauthenticated += 1;
    let waitingForAuth = true;
    const authenticatedOrGone = () => {
      if (!waitingForAuth) return;
      waitingForAuth = false;
      unauthenticated -= 1;
    };
    // A socket whose handshake fails never reaches the callback: give its place back when it closes.
    socket.once('close', authenticatedOrGone);
    server.handleUpgrade(request, socket, head, (webSocket) => {
      state.metrics.countRequest(route, 101);
      const upgradedInMs = durationMs();
      let forget = () => {};
      const connection = new WebSocketConnection(webSocket, state, {
        // Logged once the socket shows the token: anyone can open sockets that never do (those that
        // the daemon closes for it are logged rate-limited, websocket_unauthorized).
        onAuthenticated: () => {
          authenticatedOrGone();
          logUpgrade(101, upgradedInMs);
        },
        onClosed: () => {
          authenticatedOrGone();
          forget();
        },
      });
      forget = state.connections.add(connection);
    });
  };
  const close = () => {
    for (const client of server.clients) client.terminate();
    server.close();
  };
  return { handle, close };
}
