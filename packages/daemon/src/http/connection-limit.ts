import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Event streams and WebSockets held open at most: 80%, below the 90% where idle sockets start to be
 * closed, so a host that opens a stream per session (or leaks them) leaves room for requests.
 */
export function streamLimitOf(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections * 0.8));
}

/**
 * Keeps a server's open connections under `maxConnections` in a way that an idle crowd cannot lock
 * the API out. Node drops connections past `server.maxConnections`, whoever they are; so before that,
 * once the server is 90% full, each new connection closes the oldest one that has not sent a request
 * head yet. A real client sends its request at once; a socket that only holds a file descriptor
 * (or dribbles its headers) is the one that goes, so /health and the token holder still get through.
 */
export function limitConnections(server: Server, maxConnections: number): void {
  server.maxConnections = maxConnections;
  const evictAbove = Math.max(1, Math.floor(maxConnections * 0.9));
  const open = new Set<Socket>();
  // Insertion order is age: the first entry waited longest without a request.
  const waiting = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    waiting.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      waiting.delete(socket);
    });
    for (const oldest of waiting) {
      if (open.size <= evictAbove || oldest === socket) break;
      open.delete(oldest);
      waiting.delete(oldest);
      oldest.destroy();
    }
  });
  const started = (socket: Socket) => waiting.delete(socket);
  server.on('request', (request: { socket: Socket }) => started(request.socket));
  server.on('upgrade', (request: { socket: Socket }) => started(request.socket));
}
