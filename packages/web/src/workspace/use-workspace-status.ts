import { useEffect, useState } from 'react';
import type { WorkspaceStatus } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import type { ConversationState } from '../conversation/conversation-state.js';

/**
 * The session's workspace status, kept current. The events say when the workspace was prepared or
 * released, but the count of files that differ from the base is refreshed in the session's record at
 * each run's end (run.files_changed) and travels only in the snapshot: so the snapshot is read again
 * after every such event, and its status is used once it is at least as new as the fold's.
 */
export function useWorkspaceStatus(
  sessionId: string,
  conversation: Pick<ConversationState, 'workspace' | 'workspaceSeq'>,
): WorkspaceStatus | null {
  const { client } = useDaemon();
  const { workspace, workspaceSeq } = conversation;
  const [read, setRead] = useState<{ readonly seq: number; readonly status: WorkspaceStatus | null } | null>(null);

  useEffect(() => {
    let current = true;
    // A replay folds many runs at once: one read once it settles, not one per run.
    const timer = setTimeout(() => {
      client.getSession(sessionId).then(
        (snapshot) => {
          if (current) setRead({ seq: workspaceSeq, status: snapshot.workspaceStatus });
        },
        // The conversation stream reports a session that cannot be read; the fold's status stands.
        () => undefined,
      );
    }, 100);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [client, sessionId, workspaceSeq]);

  return read !== null && read.seq === workspaceSeq && read.status !== null ? read.status : workspace;
}
