import type { ProtocolEvent } from '@tether/protocol';

// The runtime hands the same event object to every live subscriber of a session, so the JSON is
// made once per event, not once per subscriber. Weak: an event nobody holds any more costs nothing.
const jsonOfEvent = new WeakMap<ProtocolEvent, string>();

/** The event as JSON text, serialized at most once per event object. */
export function eventJson(event: ProtocolEvent): string {
  let json = jsonOfEvent.get(event);
  if (json === undefined) {
    json = JSON.stringify(event);
    jsonOfEvent.set(event, json);
  }
  return json;
}
