import { type SessionSnapshot, writeOutBidirectionalControls } from '@tether/protocol';

/** How the list labels a session: the daemon's state, with a failed last run told apart from idle. */
export type SessionStatus = 'waiting' | 'running' | 'failed' | 'idle' | 'closed';

export function sessionStatus(snapshot: SessionSnapshot): SessionStatus {
  if (snapshot.state === 'waiting' || snapshot.state === 'running' || snapshot.state === 'closed')
    return snapshot.state;
  return snapshot.lastRun?.outcome === 'failed' ? 'failed' : 'idle';
}

/** What the list calls a session: its first turn, or why it has no title. */
export function sessionTitle(snapshot: SessionSnapshot): string {
  // The first turn's words, bidirectional controls written out: a title cannot show "evil.exe" reversed.
  if (snapshot.title !== null) return writeOutBidirectionalControls(snapshot.title);
  // Runs but no title: the turns were redacted, or only controls ran.
  return snapshot.lastRun === null && snapshot.activeRunId === null ? 'No turns yet' : 'Untitled';
}

export const statusLabels: Record<SessionStatus, string> = {
  waiting: 'Waiting for you',
  running: 'Running',
  failed: 'Failed',
  idle: 'Idle',
  closed: 'Closed',
};

const statusRank: Record<SessionStatus, number> = { waiting: 0, running: 1, failed: 2, idle: 2, closed: 3 };

/** Waiting-for-you first, then running, then the rest by last activity; closed ones last. */
export function orderSessions<T extends { snapshot: SessionSnapshot; status: SessionStatus }>(
  sessions: readonly T[],
): T[] {
  return sessions
    .slice()
    .sort(
      (left, right) =>
        statusRank[left.status] - statusRank[right.status] ||
        (left.snapshot.lastActivityAt < right.snapshot.lastActivityAt
          ? 1
          : left.snapshot.lastActivityAt > right.snapshot.lastActivityAt
            ? -1
            : 0),
    );
}

/**
 * One list from several pages (the newest sessions, and every waiting or running one however old):
 * each session once, the first copy kept (pages are read at the same moment).
 */
export function mergeSessionPages(pages: readonly (readonly SessionSnapshot[])[]): SessionSnapshot[] {
  const seen = new Set<string>();
  const merged: SessionSnapshot[] = [];
  for (const page of pages) {
    for (const snapshot of page) {
      if (seen.has(snapshot.sessionId)) continue;
      seen.add(snapshot.sessionId);
      merged.push(snapshot);
    }
  }
  return merged;
}
