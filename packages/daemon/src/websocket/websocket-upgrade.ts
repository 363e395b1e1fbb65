import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { passesOriginPolicy } from '../auth/origin-check.js';
import { maxCommandBytes } from '../routes/commands.js';
import type { DaemonState } from '../http/daemon-state.js';
import { WebSocketConnection } from './websocket-connection.js';

const route = '/v1/ws';

const reasons: Record<number, string> = { 403: 'Forbidden', 404: 'Not Found', 503: 'Service Unavailable' };

/** Answers an upgrade we will not take with a plain HTTP status and an empty body. */
function refuse(socket: Duplex, status: number): void {
  socket.end(`HTTP/1.1 ${status} ${reasons[status]}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  socket.destroy();
}

/**
 * The `upgrade` side of the HTTP server: only /v1/ws, and only after the same Host/Origin check as
 * every request. The token comes in the first frame (browsers cannot set headers on a WebSocket).
 */
export function createUpgradeHandler(state: DaemonState): { handle: (request: IncomingMessage, socket: Duplex, head: Buffer) => void; close: () => void } {
  const server = new WebSocketServer({ noServer: true, maxPayload: maxCommandBytes });
  const handle = (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const started = performance.now();
    const answer = (status: number) => {
      state.metrics.countRequest(route, status);
      state.logger.info({ method: 'GET', route, status, durationMs: Math.round((performance.now() - started) * 10) / 10 }, 'upgrade');
    };
    socket.on('error', () => socket.destroy());
    const origin = request.headers.origin;
    if (!passesOriginPolicy({ host: request.headers.host, origin: Array.isArray(origin) ? origin[0] : origin }, state.policy)) {
      answer(403);
      return refuse(socket, 403);
    }
    const path = (request.url ?? '').split('?')[0];
    if (path !== route) {
      answer(404);
      return refuse(socket, 404);
    }
    if (state.draining) {
      answer(503);
      return refuse(socket, 503);
    }
    server.handleUpgrade(request, socket, head, (webSocket) => {
      answer(101);
      let forget = () => {};
      const connection = new WebSocketConnection(webSocket, state, () => forget());
      forget = state.connections.add(connection);
    });
  };
  const close = () => {
    for (const client of server.clients) client.terminate();
    server.close();
  };
  return { handle, close };
}
