import type { ReactNode } from 'react';
import { formatCost, formatTokens } from '../format/format-values.js';
import { MarkdownText } from '../markdown/markdown-text.js';
import { sessionPath } from '../routing/use-route.js';
import { type InputCancelReason, describeContextCompaction, writeOutBidirectionalControls } from '@tether/protocol';
import {
  type ConversationState,
  type FollowUp,
  type InteractionEntry,
  type RunEntry,
  type RunPart,
  controlOutputShownAsAnswer,
} from './conversation-state.js';
import { TurnActions, type TurnActionsProps } from './turn-actions.js';
import { TurnAttachments } from './turn-attachments.js';
import { RunChangedFilesView } from '../workspace/run-changed-files.js';

const toolStatusLabels = { invoked: 'running', succeeded: 'succeeded', failed: 'failed' } as const;

/** What an edited approval ran instead, on one line, its start and end when long. */
function editedSubject(input: Readonly<Record<string, unknown>>): string {
  const subject = input.command ?? input.file_path ?? input.url;
  const line = (typeof subject === 'string' ? subject : JSON.stringify(input)).replace(/\s+/g, ' ').trim();
  return writeOutBidirectionalControls(line.length <= 200 ? line : `${line.slice(0, 140)} … ${line.slice(-50)}`);
}

function describeInteraction(entry: InteractionEntry | undefined): string {
  if (entry === undefined) return 'A prompt';
  const what =
    entry.request.kind === 'approval'
      ? `Approval for ${entry.request.toolName}`
      : `${entry.request.questions.length === 1 ? 'A question' : `${entry.request.questions.length} questions`}`;
  const approval = entry.answer?.decision === 'approve' ? entry.answer : null;
  const scope =
    approval?.scope === 'session' ? ' for the session' : approval?.scope === 'local_settings' ? ' in the project' : '';
  const results: Record<InteractionEntry['result'], string> = {
    pending: 'waiting for you',
    approved: `approved${scope}${approval?.updatedInput ? ` with an edit: ${editedSubject(approval.updatedInput)}` : ''}`,
    denied: entry.answer?.decision === 'deny' && entry.answer.interrupt ? 'denied, run stopped' : 'denied',
    answered: 'answered',
    declined: 'declined',
    withdrawn: entry.withdrawnByStop ? 'withdrawn: the run was stopped' : 'withdrawn by the agent',
    cancelled: 'cancelled (the run ended)',
    send_failed: 'could not be delivered',
  };
  return `${what}: ${results[entry.result]}`;
}

function RunPartView({
  run,
  part,
  interactions,
}: {
  readonly run: RunEntry;
  readonly part: RunPart;
  readonly interactions: ConversationState['interactions'];
}): ReactNode {
  switch (part.kind) {
    case 'text':
      return part.subagent ? (
        <details className="subagent-text">
          <summary>Subagent output</summary>
          <MarkdownText text={part.text} />
        </details>
      ) : (
        <MarkdownText text={part.text} />
      );
    case 'thinking':
      return (
        <details className="thinking">
          <summary>Thinking</summary>
          <p className="thinking-text">{part.text}</p>
        </details>
      );
    case 'tool':
      return (
        <p className={`tool-row tool-${part.status}`}>
          <span className="tool-name">{part.toolName}</span>{' '}
          <span className="tool-status">{toolStatusLabels[part.status]}</span>
        </p>
      );
    case 'interaction': {
      const entry = interactions[part.interactionRef];
      return (
        <p className={`interaction-row interaction-${entry?.result ?? 'pending'}`}>{describeInteraction(entry)}</p>
      );
    }
    case 'follow_up':
      return <FollowUpEnd followUp={part.followUp} />;
    case 'compaction':
      return <p className="compaction-row">{describeContextCompaction(part)}</p>;
    case 'control':
      return (
        <div className="control-output">
          <p className="control-output-title">
            /{part.name}: {part.status}
          </p>
          {/* The CLI writes /context's report (headings, tables) as markdown: read like an answer. */}
          {part.output === '' || controlOutputShownAsAnswer(run, part.output) ? null : (
            <MarkdownText text={part.output} />
          )}
        </div>
      );
  }
}

const cancelReasons: Record<InputCancelReason, string> = {
  withdrawn: 'withdrawn',
  interrupted: 'the run was stopped',
  session_closed: 'the session was closed',
  runtime_restarted: 'the daemon restarted',
  agent_refused: 'the agent did not take it',
  input_invalid: 'a file it refers to is no longer as it was',
};

/** A follow-up that ended in this run: steered into it, or cancelled while it waited. */
function FollowUpEnd({ followUp }: { readonly followUp: FollowUp }) {
  const text = followUp.text === null ? '(input redacted)' : followUp.text;
  if (followUp.status === 'folded')
    return (
      <div className="follow-up follow-up-folded">
        <p className="turn-input">{text}</p>
        <p className="follow-up-note">Folded into this run</p>
      </div>
    );
  const why = followUp.cancelReason === null ? '' : ` (${cancelReasons[followUp.cancelReason]})`;
  return (
    <div className="follow-up follow-up-cancelled">
      <p className="turn-input">{text}</p>
      <p className="follow-up-note">
        {followUp.delivery === 'steer' ? 'Steer' : 'Queued follow-up'} cancelled{why}
        {followUp.error ? `: ${followUp.error.message}` : ''}
      </p>
    </div>
  );
}

function RunStatusLine({ run }: { readonly run: RunEntry }) {
  const cost = run.usage === null ? null : `${formatTokens(run.usage)} · ${formatCost(run.usage.costUsd)}`;
  if (run.outcome === null) {
    const doing = run.stopRequested
      ? 'Stopping…'
      : run.queuePosition !== null
        ? `Queued (${run.queuePosition} ahead)`
        : run.retry !== null
          ? `Retrying the model call (attempt ${run.retry.attempt} of ${run.retry.maxAttempts})…`
          : 'Running…';
    return <p className="run-status run-status-active">{doing}</p>;
  }
  const outcome = run.outcome === 'succeeded' ? 'Succeeded' : run.outcome === 'interrupted' ? 'Stopped' : 'Failed';
  return (
    <p className={`run-status run-status-${run.outcome}`}>
      {outcome}
      {run.error && run.outcome === 'failed' ? `: ${run.error.message}` : ''}
      {cost ? ` · ${cost}` : ''}
    </p>
  );
}

/** Links to sessions forked from a turn (or from the whole conversation). */
export function ForkLinks({
  forks,
  onOpenSession,
}: {
  readonly forks: readonly string[];
  readonly onOpenSession: (sessionId: string) => void;
}) {
  if (forks.length === 0) return null;
  return (
    <p className="fork-links">
      Forked into{' '}
      {forks.map((forkSessionId, index) => (
        <span key={forkSessionId}>
          {index === 0 ? '' : ', '}
          <a
            href={sessionPath(forkSessionId)}
            onClick={(event) => {
              event.preventDefault();
              onOpenSession(forkSessionId);
            }}
          >
            {forkSessionId}
          </a>
        </span>
      ))}
    </p>
  );
}

function RewindNote({ run }: { readonly run: RunEntry }) {
  if (!run.rewound) return null;
  const files = run.rewoundTo?.files;
  return (
    <p className="rewind-note">
      {run.rewoundTo === null ? 'Rewound' : 'Rewound to before this turn'}: no longer in the agent&apos;s context
      {files == null
        ? ''
        : `; files restored (${files.paths.length} ${files.paths.length === 1 ? 'file' : 'files'}, +${files.insertions} −${files.deletions})`}
      .
    </p>
  );
}

export interface RunViewProps {
  readonly sessionId: string;
  readonly run: RunEntry;
  readonly interactions: ConversationState['interactions'];
  /** The turn's actions; null for a control run. */
  readonly actions: TurnActionsProps | null;
  readonly onOpenSession: (sessionId: string) => void;
}

/** One run: what was asked, then the answer, thinking, tools and prompts in the order they happened. */
export function RunView({ sessionId, run, interactions, actions, onOpenSession }: RunViewProps) {
  return (
    <article
      className={`run${run.rewound ? ' run-rewound' : ''}`}
      aria-label={
        run.control === null ? `Turn${actions === null ? '' : ` ${actions.turn}`}` : `Control /${run.control}`
      }
    >
      <RewindNote run={run} />
      {run.fromQueue === null ? null : <p className="follow-up-note">Queued follow-up, run after the turn before</p>}
      {run.startedByAgent ? (
        <p className="follow-up-note">Begun by the agent: a background task it ran finished</p>
      ) : null}
      {run.control !== null ? (
        <p className="turn-input turn-control">/{run.control}</p>
      ) : run.input === null ? (
        <p className="turn-input">(input redacted)</p>
      ) : (
        <>
          {run.input === '' ? null : <p className="turn-input">{run.input}</p>}
          <TurnAttachments sessionId={sessionId} attachments={run.attachments} />
        </>
      )}
      <div className="run-parts">
        {run.parts.map((part, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts are only ever appended, so a position names one part for good.
          <RunPartView key={index} run={run} part={part} interactions={interactions} />
        ))}
      </div>
      <RunStatusLine run={run} />
      <RunChangedFilesView changed={run.changedFiles} />
      {actions === null ? null : <TurnActions {...actions} />}
      <ForkLinks forks={run.forks} onOpenSession={onOpenSession} />
    </article>
  );
}
