import type { RunOutcome, SessionSnapshot } from '@tether/protocol';

/** How the list labels a session: the daemon's state, with a failed last run told apart from idle. */
export type SessionStatus = 'waiting' | 'running' | 'failed' | 'idle' | 'closed';

/** What the list learns about a session from its events (the snapshot holds neither). */
export interface SessionDigest {
  /** The first turn's text, null when redacted or not read yet. */
  readonly title: string | null;
  readonly lastOutcome: RunOutcome | null;
  /** The seq the outcome was read at. */
  readonly checkedSeq: number;
}

export function sessionStatus(snapshot: SessionSnapshot, digest: SessionDigest | undefined): SessionStatus {
  if (snapshot.state === 'waiting' || snapshot.state === 'running' || snapshot.state === 'closed') return snapshot.state;
  return digest?.lastOutcome === 'failed' ? 'failed' : 'idle';
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
export function orderSessions<T extends { snapshot: SessionSnapshot; status: SessionStatus }>(sessions: readonly T[]): T[] {
  return sessions.slice().sort((left, right) => statusRank[left.status] - statusRank[right.status] || (left.snapshot.updatedAt < right.snapshot.updatedAt ? 1 : left.snapshot.updatedAt > right.snapshot.updatedAt ? -1 : 0));
}
