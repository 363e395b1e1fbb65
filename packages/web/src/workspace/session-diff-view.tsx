import { useEffect, useMemo, useState } from 'react';
import { AgentError, type SessionDiff } from '@tether/protocol';
import { useDaemon } from '../connection/daemon-context.js';
import { describeFailure, isTokenRefused } from '../connection/describe-failure.js';
import { FailureNotice } from '../connection/failure-notice.js';
import { SessionMissing } from '../conversation/session-missing.js';
import { type DiffFileSection, splitUnifiedDiff } from './unified-diff.js';
import { changedFileName, changedFilesLabel, formatLineCounts } from './workspace-summary.js';

function DiffFileView({ section }: { readonly section: DiffFileSection }) {
  return (
    <article className="diff-file" aria-label={`Diff of ${section.path}`}>
      <h3 className="diff-file-path">{section.path}</h3>
      {section.notes.length === 0 ? null : <p className="diff-file-notes">{section.notes.join(' · ')}</p>}
      {section.hunks.map((hunk, hunkIndex) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a fetched diff never changes in place; a refresh replaces it whole.
        <pre className="diff-hunk" key={hunkIndex}>
          <span className="diff-hunk-header">{hunk.header}</span>
          {'\n'}
          {hunk.lines.map((line, lineIndex) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: as above, lines are only ever read.
            <span className={`diff-line diff-line-${line.kind}`} key={lineIndex}>
              {line.text}
              {'\n'}
            </span>
          ))}
        </pre>
      ))}
    </article>
  );
}

export interface SessionDiffViewProps {
  readonly sessionId: string;
  readonly conversationPath: string;
  readonly onOpenConversation: () => void;
  /** Back to the session list (the session does not exist). */
  readonly onLeave: () => void;
}

/**
 * The session's work against the commit its worktree started from (GET /v1/sessions/:id/diff): the
 * changed files with their counts, then each file's hunks. The diff is git's text and is shown only
 * as text, never read as markup.
 */
export function SessionDiffView({ sessionId, conversationPath, onOpenConversation, onLeave }: SessionDiffViewProps) {
  const { client, tokenRefused } = useDaemon();
  const [diff, setDiff] = useState<SessionDiff | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [reads, setReads] = useState(0);

  useEffect(() => {
    let current = true;
    setFailure(null);
    client.getSessionDiff(sessionId).then(
      (answer) => {
        if (current) setDiff(answer);
      },
      (error: unknown) => {
        if (!current) return;
        if (isTokenRefused(error)) tokenRefused();
        // As the conversation's address says it: the daemon's message names an id, and offers nothing to do here.
        else if (AgentError.isInstance(error) && error.code === 'session_not_found') setMissing(true);
        else setFailure(describeFailure(error));
      },
    );
    return () => {
      current = false;
    };
  }, [client, sessionId, tokenRefused, reads]);

  const sections = useMemo(() => (diff === null ? [] : splitUnifiedDiff(diff.diff)), [diff]);
  const added = diff?.files.reduce((sum, file) => sum + (file.added ?? 0), 0) ?? 0;
  const removed = diff?.files.reduce((sum, file) => sum + (file.removed ?? 0), 0) ?? 0;

  if (missing) return <SessionMissing sessionId={sessionId} onLeave={onLeave} />;
  return (
    <section className="diff-view" aria-label="Changes">
      <header className="session-header">
        <h2 className="session-title">Changes{diff?.branch == null ? '' : ` on ${diff.branch}`}</h2>
        {diff === null ? null : (
          <p className="session-facts">
            <span>since {diff.baseCommit.slice(0, 12)}</span>
            <span>{changedFilesLabel(diff.files.length)}</span>
            <span>
              +{added} −{removed} lines
            </span>
          </p>
        )}
        <div className="session-actions">
          <a
            href={conversationPath}
            onClick={(event) => {
              if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
              event.preventDefault();
              onOpenConversation();
            }}
          >
            ← The conversation
          </a>
          <button type="button" onClick={() => setReads((count) => count + 1)}>
            Refresh
          </button>
        </div>
      </header>
      <FailureNotice failure={failure} />
      {diff === null && failure === null ? <p className="muted">Loading…</p> : null}
      {diff === null ? null : diff.files.length === 0 ? (
        <p className="muted">Nothing changed since the base commit.</p>
      ) : (
        <>
          <ul className="diff-files" aria-label="Changed files">
            {diff.files.map((file) => (
              <li key={file.path}>
                <span className="changed-file-path">{changedFileName(file)}</span>
                <span className="changed-file-status">{file.status}</span>
                <span className="changed-file-counts">{formatLineCounts(file)}</span>
              </li>
            ))}
          </ul>
          {diff.truncated ? (
            <p className="notice notice-warning" role="status">
              The diff is longer than the daemon sends at once, so it stops early below; the list of files above is
              complete.
            </p>
          ) : null}
          {sections.map((section, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a path may appear twice (a type change), and the list is never edited.
            <DiffFileView key={index} section={section} />
          ))}
        </>
      )}
    </section>
  );
}
