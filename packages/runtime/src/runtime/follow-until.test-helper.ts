import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from './runtime-types.js';

/** Follows until `until` holds for an event; resolves with everything handed on. */
export function followUntil(
  runtime: AgentRuntime,
  sessionId: string,
  afterSeq: number,
  until: (event: ProtocolEvent) => boolean,
): Promise<ProtocolEvent[]> {
  return new Promise((resolve, reject) => {
    const events: ProtocolEvent[] = [];
    runtime.follow(sessionId, {
      afterSeq,
      onEvent: (event) => {
        events.push(event);
        if (!until(event)) return true;
        resolve(events);
        return false;
      },
      onError: reject,
    });
  });
}
