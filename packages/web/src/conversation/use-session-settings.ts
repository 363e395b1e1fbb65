import { useCallback, useEffect, useState } from 'react';
import type { PermissionMode } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import { type SessionSettings, snapshotSettings } from '../sessions/session-settings.js';

export interface SnapshotSettings extends SessionSettings {
  /** The permission modes the session's agent cannot enter live. */
  readonly modesRequiringRestart: readonly PermissionMode[];
  /** Reads the snapshot again (after a mode change). */
  readonly refresh: () => void;
}

/**
 * The session's settings from its snapshot: the modes its agent cannot enter live, which the events
 * do not carry (the provider answers at read time), and the model and mode, which a fork's or a new
 * session's events may not name yet (see snapshotSettings). Read again whenever an event that can
 * change them arrives (`agentSeq`), and on demand after a mode change.
 */
export function useSessionSettings(sessionId: string, agentSeq: number): SnapshotSettings {
  const { client } = useDaemon();
  const [read, setRead] = useState<Omit<SnapshotSettings, 'refresh'>>({
    model: null,
    mode: null,
    modesRequiringRestart: [],
  });
  const [reads, setReads] = useState(0);
  const refresh = useCallback(() => setReads((count) => count + 1), []);

  useEffect(() => {
    let current = true;
    client.getSession(sessionId).then(
      (snapshot) => {
        if (current) setRead({ ...snapshotSettings(snapshot), modesRequiringRestart: snapshot.modesRequiringRestart });
      },
      // The conversation stream reports a session that cannot be read; the view keeps what it knew.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [client, sessionId, agentSeq, reads]);

  return { ...read, refresh };
}
