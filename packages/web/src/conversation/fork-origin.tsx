import { useEffect, useState } from 'react';
import type { TetherClient } from '@tether/client';
import { sessionPath } from '../routing/use-route.js';
import { useDaemon } from '../connection/daemon-context.js';
import { type ForkOrigin as Origin, applyEvent, emptyConversation, turnNumber } from './conversation-state.js';

interface SourceFacts {
  readonly title: string | null;
  /** The source's turn number the fork ends with; null when unknown or the whole conversation. */
  readonly turn: number | null;
  readonly missing: boolean;
}

/** Replays the source's events up to the run the fork ends with, to number that turn as its view does. */
async function sourceFacts(client: TetherClient, origin: Origin, signal: AbortSignal): Promise<SourceFacts> {
  const snapshot = await client.getSession(origin.sessionId);
  if (origin.runId === null) return { title: snapshot.title, turn: null, missing: false };
  let state = emptyConversation;
  for await (const event of client.subscribe(origin.sessionId, { signal })) {
    state = applyEvent(state, event);
    if (event.type === 'run.started' && event.runId === origin.runId) break;
    if (event.seq >= snapshot.lastSeq) break;
  }
  return { title: snapshot.title, turn: turnNumber(state, origin.runId), missing: false };
}

/** "Forked from <source> at turn N", with a link to the source. */
export function ForkOrigin({
  origin,
  onOpenSession,
}: {
  readonly origin: Origin;
  readonly onOpenSession: (sessionId: string) => void;
}) {
  const { client } = useDaemon();
  const [facts, setFacts] = useState<SourceFacts | null>(null);
  useEffect(() => {
    const controller = new AbortController();
    sourceFacts(client, origin, controller.signal).then(
      (found) => setFacts(found),
      () => {
        // Deleted since, or unreadable: the fork still names where it came from, by id.
        if (!controller.signal.aborted) setFacts({ title: null, turn: null, missing: true });
      },
    );
    return () => controller.abort();
  }, [client, origin]);
  const name = facts?.title ?? origin.sessionId;
  const where =
    origin.runId === null ? ' (the whole conversation)' : facts?.turn == null ? '' : ` at turn ${facts.turn}`;
  return (
    <p className="fork-origin">
      Forked from{' '}
      {facts?.missing ? (
        <span>{name} (no longer available)</span>
      ) : (
        <a
          href={sessionPath(origin.sessionId)}
          onClick={(event) => {
            event.preventDefault();
            onOpenSession(origin.sessionId);
          }}
        >
          {name}
        </a>
      )}
      {where}
    </p>
  );
}
