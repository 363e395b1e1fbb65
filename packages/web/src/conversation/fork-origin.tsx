import { useEffect, useState } from 'react';
import type { TetherClient } from '@tether/client';
import { writeOutBidirectionalControls } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import { sessionPath } from '../routing/use-route.js';
import {
  type ConversationState,
  type ForkOrigin,
  type RunEntry,
  applyEvent,
  emptyConversation,
  turnNumber,
} from './conversation-state.js';
import { RunView } from './run-view.js';

/** Turns of one session a fork's conversation holds, shown as that session shows them. */
export interface InheritedPart {
  readonly sessionId: string;
  readonly runs: readonly RunEntry[];
  readonly interactions: ConversationState['interactions'];
}

/** What a fork shows of the session it came from. */
export interface ForkSource {
  readonly origin: ForkOrigin;
  /** Null until read, and when the source has none. */
  readonly title: string | null;
  /** The source's turn number the fork ends with; null for the whole conversation, or until read. */
  readonly turn: number | null;
  /**
   * The turns the fork's conversation holds before its own (its log starts after them), oldest
   * first: the source's, after those the source itself was forked with (a fork of a fork).
   */
  readonly inherited: readonly InheritedPart[];
  /** The source cannot be read any more (deleted). */
  readonly missing: boolean;
}

/** A fork of a fork of … is read this many sessions back at most. */
const forkDepthLimit = 20;

/**
 * Replays the source's events up to the end of the run the fork ends with (all of them, for a fork
 * of the whole conversation): its turns as its own view shows them, numbered the same way; and,
 * when the source is a fork itself, the turns it started with, before them.
 */
async function readSource(
  client: TetherClient,
  origin: ForkOrigin,
  signal: AbortSignal,
  depth = 0,
): Promise<ForkSource> {
  const snapshot = await client.getSession(origin.sessionId);
  let state = emptyConversation;
  if (snapshot.lastSeq > 0) {
    for await (const event of client.subscribe(origin.sessionId, { signal })) {
      state = applyEvent(state, event);
      if (event.type === 'run.completed' && event.runId === origin.runId) break;
      if (event.seq >= snapshot.lastSeq) break;
    }
  }
  const end = origin.runId === null ? state.runs.length : state.runs.findIndex((run) => run.runId === origin.runId) + 1;
  const own: InheritedPart = {
    sessionId: origin.sessionId,
    runs: state.runs.slice(0, end),
    interactions: state.interactions,
  };
  const earlier =
    snapshot.forkedFrom !== null && depth < forkDepthLimit
      ? await readSource(client, snapshot.forkedFrom, signal, depth + 1).then(
          (source) => source.inherited,
          // Its own source deleted since: what is left of the chain is still shown.
          () => [],
        )
      : [];
  return {
    origin,
    title: snapshot.title,
    turn: origin.runId === null ? null : turnNumber(state, origin.runId),
    inherited: [...earlier, own],
    missing: false,
  };
}

/** The session a fork came from, read once per view; null for a session that is not a fork. */
export function useForkSource(origin: ForkOrigin | null): ForkSource | null {
  const { client } = useDaemon();
  const [source, setSource] = useState<ForkSource | null>(null);
  useEffect(() => {
    if (origin === null) return;
    const controller = new AbortController();
    const unread: ForkSource = { origin, title: null, turn: null, inherited: [], missing: false };
    setSource(unread);
    readSource(client, origin, controller.signal).then(setSource, () => {
      // Deleted since, or unreadable: the fork still names where it came from, by id.
      if (!controller.signal.aborted) setSource({ ...unread, missing: true });
    });
    return () => controller.abort();
  }, [client, origin]);
  return origin === null ? null : source;
}

function SourceName({
  source,
  onOpenSession,
}: {
  readonly source: ForkSource;
  readonly onOpenSession: (sessionId: string) => void;
}) {
  const name = source.title === null ? source.origin.sessionId : writeOutBidirectionalControls(source.title);
  if (source.missing) return <span>{name} (no longer available)</span>;
  return (
    <a
      href={sessionPath(source.origin.sessionId)}
      onClick={(event) => {
        event.preventDefault();
        onOpenSession(source.origin.sessionId);
      }}
    >
      {name}
    </a>
  );
}

/** "Forked from <source> at turn N", with a link to the source. */
export function ForkOriginLine({
  source,
  onOpenSession,
}: {
  readonly source: ForkSource;
  readonly onOpenSession: (sessionId: string) => void;
}) {
  const where =
    source.origin.runId === null ? ' (the whole conversation)' : source.turn === null ? '' : ` at turn ${source.turn}`;
  return (
    <p className="fork-origin">
      Forked from <SourceName source={source} onOpenSession={onOpenSession} />
      {where}
    </p>
  );
}

/** The turns a fork's conversation starts with, as the source shows them: read-only, folded open. */
export function InheritedTurns({
  source,
  onOpenSession,
}: {
  readonly source: ForkSource;
  readonly onOpenSession: (sessionId: string) => void;
}) {
  const runs = source.inherited.flatMap((part) => part.runs);
  if (runs.length === 0) return null;
  const turns = runs.filter((run) => run.control === null).length;
  return (
    <details className="inherited-turns" open>
      <summary>
        The conversation so far: {turns} {turns === 1 ? 'turn' : 'turns'} from{' '}
        <SourceName source={source} onOpenSession={onOpenSession} />
      </summary>
      {source.inherited.flatMap((part) =>
        part.runs.map((run) => (
          <RunView
            key={run.runId}
            sessionId={part.sessionId}
            run={run}
            interactions={part.interactions}
            actions={null}
            onOpenSession={onOpenSession}
          />
        )),
      )}
    </details>
  );
}
