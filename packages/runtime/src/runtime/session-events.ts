import type { ProtocolEvent } from '@tether/protocol';
import type { TetherStore } from '../store/tether-store.js';

const eventPage = 1000;

/**
 * The session's whole log, page by page: for what is rare (a rewind or a fork at a run, a turn with
 * images, recovering a run a stopped runtime left open), not for a reader that follows.
 */
export async function* sessionEvents(store: TetherStore, sessionId: string): AsyncGenerator<ProtocolEvent> {
  for (let afterSeq = 0; ; ) {
    const page = await store.readEvents(sessionId, { afterSeq, limit: eventPage });
    yield* page;
    if (page.length < eventPage) return;
    afterSeq = page.at(-1)!.seq;
  }
}
