import type { WebSocket } from 'ws';

/**
 * ws takes one maxPayload per server, fixed when a socket is set up; the daemon needs two: a small
 * one until the auth frame, the command limit after it. ws's receiver keeps the limit in
 * `_maxPayload` and reads it at every frame header, so raising it after auth keeps ws's own handling
 * of an oversized frame in both phases (close 1009, stop buffering, drain and discard the rest),
 * which a byte counter of our own around the socket could only imitate. False when the field is
 * gone (a ws upgrade changed it): the caller then closes the socket instead of serving it with the
 * small limit, and tests/daemon/daemon-hostile-clients.test.ts fails.
 */
export function raisePayloadLimit(socket: WebSocket, bytes: number): boolean {
  const receiver = (socket as unknown as { _receiver?: { _maxPayload?: unknown } })._receiver;
  if (receiver === undefined || typeof receiver._maxPayload !== 'number') return false;
  receiver._maxPayload = bytes;
  return true;
}
