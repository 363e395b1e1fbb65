import type { ProtocolEvent } from '@tether/protocol';
import type { OutboxFrame } from '../streaming/bounded-outbox.js';
import { eventJson } from '../streaming/serialized-event.js';

const frameOfEvent = new WeakMap<ProtocolEvent, OutboxFrame>();

/**
 * One event as a /v1/ws `event` frame, encoded once per event object and shared by every socket
 * subscribed to its session, as sseEventFrame is by every stream: a socket that does not read holds
 * its queued frames until it is cut off, and a copy per socket would multiply that by the sockets.
 */
export function webSocketEventFrame(event: ProtocolEvent): OutboxFrame {
  let frame = frameOfEvent.get(event);
  if (frame === undefined) {
    frame = Buffer.from(`{"type":"event","sessionId":${JSON.stringify(event.sessionId)},"event":${eventJson(event)}}`);
    frameOfEvent.set(event, frame);
  }
  return frame;
}
