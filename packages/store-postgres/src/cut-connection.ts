import type pg from 'pg';

/**
 * Closes a client's socket at once, without the goodbye pg's end() sends and waits to see answered:
 * a server that stopped answering (stopped, or cut off behind a firewall that drops packets) never
 * answers it, nor the statement in flight, which now fails as a lost connection. pg's own end() does
 * the same only for a client with a statement in flight.
 */
export function cutConnection(client: pg.ClientBase): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}
