import { useCallback, useEffect, useRef, useState } from 'react';
import type { SessionSnapshot } from '@tether/protocol';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { useDaemon } from '../connection/daemon-context.js';
import { digestIsStale, readSessionDigest } from './read-session-digest.js';
import { type SessionDigest, type SessionStatus, orderSessions, sessionStatus } from './session-order.js';

export interface ListedSession {
  readonly snapshot: SessionSnapshot;
  readonly status: SessionStatus;
  readonly digest: SessionDigest | undefined;
}

export interface SessionList {
  readonly sessions: readonly ListedSession[];
  readonly loaded: boolean;
  /** Set while the daemon cannot be reached; the list keeps what it had and keeps trying. */
  readonly failure: string | null;
  readonly refresh: () => void;
}

// The list is one in-memory read on a loopback daemon: polling it is cheap, and it also finds
// sessions other clients opened. The open session's own view is pushed live (SSE) instead.
const pollIntervalMs = 1_500;
const pageSize = 200;

export function useSessionList(): SessionList {
  const { client, tokenRefused } = useDaemon();
  const [snapshots, setSnapshots] = useState<readonly SessionSnapshot[]>([]);
  const [digests, setDigests] = useState<Readonly<Record<string, SessionDigest>>>({});
  const [loaded, setLoaded] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const digestsRef = useRef(digests);
  digestsRef.current = digests;
  const wake = useRef<() => void>(() => {});

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // One digest read at a time: the browser allows few connections per host and the open session's stream needs one.
    let reading = false;
    const readDigests = async (current: readonly SessionSnapshot[]) => {
      if (reading) return;
      reading = true;
      try {
        for (const snapshot of current) {
          if (stopped || !digestIsStale(snapshot, digestsRef.current[snapshot.sessionId])) continue;
          try {
            const digest = await readSessionDigest(client, snapshot, digestsRef.current[snapshot.sessionId]);
            if (!stopped) setDigests((previous) => ({ ...previous, [snapshot.sessionId]: digest }));
          } catch {
            // A session deleted meanwhile, or the daemon gone: the next poll decides.
          }
        }
      } finally {
        reading = false;
      }
    };
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
        const page = await client.listSessions({ limit: pageSize });
        if (stopped) return;
        setSnapshots(page.sessions);
        setLoaded(true);
        setFailure(null);
        void readDigests(page.sessions);
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
  const sessions = orderSessions(snapshots.map((snapshot) => ({ snapshot, digest: digests[snapshot.sessionId], status: sessionStatus(snapshot, digests[snapshot.sessionId]) })));
  return { sessions, loaded, failure, refresh };
}
