import { useCallback, useEffect, useState } from 'react';
import type { PermissionMode } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';

/**
 * The permission modes the session's agent cannot enter live, from the session's snapshot. The
 * events do not carry it (the provider answers at read time), so it is read again whenever an event
 * that can change it arrives (`agentSeq`), and on demand after a mode change.
 */
export function useModesRequiringRestart(
  sessionId: string,
  agentSeq: number,
): { readonly modes: readonly PermissionMode[]; readonly refresh: () => void } {
  const { client } = useDaemon();
  const [modes, setModes] = useState<readonly PermissionMode[]>([]);
  const [reads, setReads] = useState(0);
  const refresh = useCallback(() => setReads((count) => count + 1), []);

  useEffect(() => {
    let current = true;
    client.getSession(sessionId).then(
      (snapshot) => {
        if (current) setModes(snapshot.modesRequiringRestart);
      },
      // The conversation stream reports a session that cannot be read; the menu keeps what it knew.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [client, sessionId, agentSeq, reads]);

  return { modes, refresh };
}
