import { agentDirectory } from '@tether/protocol';
import { useEffect, useState } from 'react';
import { formatCost, formatRelativeTime } from '../format/format-values.js';
import { sessionPath } from '../routing/use-route.js';
import { summarizeWorktree } from '../workspace/workspace-summary.js';
import { sessionTitle, statusLabels } from './session-order.js';
import { modeLabel, modelLabel, snapshotSettings } from './session-settings.js';
import type { ListedSession, SessionList as SessionListData } from './use-session-list.js';

function SessionListItem({
  session,
  selected,
  now,
  onOpen,
}: {
  readonly session: ListedSession;
  readonly selected: boolean;
  readonly now: number;
  readonly onOpen: (path: string) => void;
}) {
  const { snapshot, status } = session;
  const title = sessionTitle(snapshot);
  const path = sessionPath(snapshot.sessionId);
  const worktree = summarizeWorktree(snapshot.workspaceStatus);
  const settings = snapshotSettings(snapshot);
  // A fork starts with its source's title: it is told apart by saying it is one.
  const fork = snapshot.forkedFrom !== null;
  return (
    <li className={`session-item session-item-${status}${selected ? ' session-item-selected' : ''}`}>
      <a
        href={path}
        aria-current={selected ? 'page' : undefined}
        aria-label={`${title}${fork ? ' (fork)' : ''} — ${statusLabels[status]}`}
        onClick={(event) => {
          if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
          event.preventDefault();
          onOpen(path);
        }}
      >
        <span className="session-item-top">
          <span className={`status-badge status-${status}`}>{statusLabels[status]}</span>
          <span className="session-item-time">{formatRelativeTime(snapshot.lastActivityAt, now)}</span>
        </span>
        <span className="session-item-title">{title}</span>
        <span className="session-item-facts">
          {fork ? <span className="session-item-fork">Fork</span> : null}
          {worktree === null ? (
            <span className="session-item-cwd">{agentDirectory(snapshot.workspace, snapshot.workspaceStatus)}</span>
          ) : (
            <>
              <span className="session-item-cwd">{worktree.repository}</span>
              <span className="session-item-branch">Branch {worktree.branch}</span>
              {worktree.changes === null ? null : <span>{worktree.changes}</span>}
              {snapshot.workspaceStatus?.state === 'kept' ? (
                <span className="session-item-cwd">kept at {worktree.path}</span>
              ) : null}
            </>
          )}
          <span>{modelLabel(settings.model)}</span>
          <span>{modeLabel(settings.mode)}</span>
          <span>{formatCost(snapshot.usage.costUsd)}</span>
        </span>
      </a>
    </li>
  );
}

/** Every session, waiting-for-you first, with what a supervisor needs to pick one. */
export function SessionList({
  list,
  selectedSessionId,
  onOpen,
}: {
  readonly list: SessionListData;
  readonly selectedSessionId: string | null;
  readonly onOpen: (path: string) => void;
}) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(timer);
  }, []);
  const waiting = list.sessions.filter((session) => session.status === 'waiting').length;
  return (
    <nav className="session-list" aria-label="Sessions">
      <h2 className="session-list-heading">
        Sessions{waiting > 0 ? <span className="waiting-count"> · {waiting} waiting for you</span> : null}
      </h2>
      {list.failure ? (
        <p className="notice notice-warning" role="status">
          {list.failure} Retrying…
        </p>
      ) : null}
      {list.loaded && list.sessions.length === 0 ? <p className="empty">No sessions yet. Open one to start.</p> : null}
      <ul>
        {list.sessions.map((session) => (
          <SessionListItem
            key={session.snapshot.sessionId}
            session={session}
            selected={session.snapshot.sessionId === selectedSessionId}
            now={now}
            onOpen={onOpen}
          />
        ))}
      </ul>
      {list.hasOlder ? (
        <button type="button" className="session-list-older" onClick={list.showOlder}>
          Show older sessions
        </button>
      ) : null}
    </nav>
  );
}
