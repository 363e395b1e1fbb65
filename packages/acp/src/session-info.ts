import type { SessionInfo } from '@agentclientprotocol/sdk';
import { type SessionSnapshot, agentDirectory } from '@tether/protocol';

/** Where the session's agent works: the prepared directory (a worktree's folder), else the one asked for. */
export function sessionDirectory(snapshot: SessionSnapshot): string {
  return agentDirectory(snapshot.workspace, snapshot.workspaceStatus);
}

/** A Tether session as session/list shows it (any origin: ACP, `tether run`, the daemon API, the web UI). */
export function sessionInfoOf(snapshot: SessionSnapshot): SessionInfo {
  return {
    sessionId: snapshot.sessionId,
    cwd: sessionDirectory(snapshot),
    title: snapshot.title,
    updatedAt: snapshot.lastActivityAt,
  };
}
