import { useCallback, useEffect, useRef, useState } from 'react';
import type { SessionSnapshot } from '@tether/protocol';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { useDaemon } from '../connection/daemon-context.js';
import { type SessionStatus, mergeSessionPages, orderSessions, sessionStatus } from './session-order.js';

export interface ListedSession {
  readonly snapshot: SessionSnapshot;
  readonly status: SessionStatus;
}

export interface SessionList {
  readonly sessions: readonly ListedSession[];
  readonly loaded: boolean;
  /** Set while the daemon cannot be reached; the list keeps what it had and keeps trying. */
  readonly failure: string | null;
  readonly refresh: () => void;
  /** Older sessions than those listed exist (the list shows the newest, then more on asking). */
  readonly hasOlder: boolean;
  /** Lists another page of older sessions (and keeps them listed from then on). */
  readonly showOlder: () => void;
}

// The list is a few indexed reads on a loopback daemon: polling it is cheap, and it also finds
// sessions other clients opened. Snapshots carry all it shows (title, last run, last activity), so
// it reads no events. The open session's own view is pushed live (SSE) instead.
const pollIntervalMs = 1_500;
const pageSize = 200;
// Sessions that need a person, or are working, are listed however many newer sessions there are.
const alwaysListed = ['waiting', 'running'] as const;

/** The newest `wanted` sessions (a page at a time), and whether older ones are left. */
async function newestSessions(
  client: ReturnType<typeof useDaemon>['client'],
  wanted: number,
): Promise<{ sessions: SessionSnapshot[]; older: boolean }> {
  const sessions: SessionSnapshot[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await client.listSessions({ limit: pageSize, ...(before === undefined ? {} : { before }) });
    sessions.push(...page.sessions);
    if (page.next === null) return { sessions, older: false };
    if (sessions.length >= wanted) return { sessions, older: true };
    before = page.next;
  }
}

export function useSessionList(): SessionList {
  const { client, tokenRefused } = useDaemon();
  const [snapshots, setSnapshots] = useState<readonly SessionSnapshot[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const [hasOlder, setHasOlder] = useState(false);
  const wanted = useRef(pageSize);
  const wake = useRef<() => void>(() => {});

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // One poll at a time: a refresh asked for during one runs right after it, never beside it.
    let polling = false;
    let pollAgain = false;
    const poll = async () => {
      if (polling) {
        pollAgain = true;
        return;
      }
      polling = true;
      clearTimeout(timer);
      try {
        const [newest, open] = await Promise.all([
          newestSessions(client, wanted.current),
          Promise.all(alwaysListed.map((state) => client.listAllSessions({ state }))),
        ]);
        if (stopped) return;
        setSnapshots(mergeSessionPages([newest.sessions, ...open]));
        setHasOlder(newest.older);
        setLoaded(true);
        setFailure(null);
      } catch (error) {
        if (stopped) return;
        if (isTokenRefused(error)) {
          stopped = true;
          tokenRefused();
          return;
        }
        setFailure(describeFailure(error));
      } finally {
        polling = false;
      }
      if (stopped) return;
      if (pollAgain) {
        pollAgain = false;
        void poll();
      } else {
        timer = setTimeout(() => void poll(), pollIntervalMs);
      }
    };
    wake.current = () => void poll();
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [client, tokenRefused]);

  const refresh = useCallback(() => wake.current(), []);
  const showOlder = useCallback(() => {
    wanted.current += pageSize;
    wake.current();
  }, []);
  const sessions = orderSessions(snapshots.map((snapshot) => ({ snapshot, status: sessionStatus(snapshot) })));
  return { sessions, loaded, failure, refresh, hasOlder, showOlder };
}
