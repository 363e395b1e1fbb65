import type { ReactNode } from 'react';
import { formatCost, formatTokens } from '../format/format-values.js';
import { MarkdownText } from '../markdown/markdown-text.js';
import type { ConversationState, InteractionEntry, RunEntry, RunPart } from './conversation-state.js';

const toolStatusLabels = { invoked: 'running', succeeded: 'succeeded', failed: 'failed' } as const;

function describeInteraction(entry: InteractionEntry | undefined): string {
  if (entry === undefined) return 'A prompt';
  const what =
    entry.request.kind === 'approval'
      ? `Approval for ${entry.request.toolName}`
      : `${entry.request.questions.length === 1 ? 'A question' : `${entry.request.questions.length} questions`}`;
  const scope = entry.answer?.decision === 'approve' && entry.answer.scope === 'session' ? ' for the session' : '';
  const results: Record<InteractionEntry['result'], string> = {
    pending: 'waiting for you',
    approved: `approved${scope}`,
    denied: entry.answer?.decision === 'deny' && entry.answer.interrupt ? 'denied, run stopped' : 'denied',
    answered: 'answered',
    declined: 'declined',
    withdrawn: 'withdrawn by the agent',
    cancelled: 'cancelled (the run ended)',
    send_failed: 'could not be delivered',
  };
  return `${what}: ${results[entry.result]}`;
}

function RunPartView({
  part,
  interactions,
}: {
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
    case 'control':
      return (
        <div className="control-output">
          <p className="control-output-title">
            /{part.name}: {part.status}
          </p>
          {part.output === '' ? null : <pre>{part.output}</pre>}
        </div>
      );
  }
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

/** One run: what was asked, then the answer, thinking, tools and prompts in the order they happened. */
export function RunView({
  run,
  interactions,
}: {
  readonly run: RunEntry;
  readonly interactions: ConversationState['interactions'];
}) {
  return (
    <article className="run" aria-label={run.control === null ? 'Turn' : `Control /${run.control}`}>
      {run.control !== null ? (
        <p className="turn-input turn-control">/{run.control}</p>
      ) : (
        <p className="turn-input">{run.input ?? '(input redacted)'}</p>
      )}
      <div className="run-parts">
        {run.parts.map((part, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: parts are only ever appended, so a position names one part for good.
          <RunPartView key={index} part={part} interactions={interactions} />
        ))}
      </div>
      <RunStatusLine run={run} />
    </article>
  );
}
