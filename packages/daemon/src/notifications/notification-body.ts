import { stripTerminalEscapes } from '@tether/provider-claude';
import { randomBytes } from 'node:crypto';
import {
  type InteractionRequest,
  type ProtocolEvent,
  type RunOutcome,
  type SessionSnapshot,
  type StopReason,
  writeOutBidirectionalControls,
} from '@tether/protocol';
import type { NotificationKind } from './notification-options.js';

/** Bounds on the text a notification carries: enough to decide from a phone, never a whole prompt. */
export const notificationTextLimits = { summary: 200, question: 500, label: 100, title: 200, action: 2_000 } as const;

export interface InteractionSummary {
  readonly ref: string;
  readonly kind: InteractionRequest['kind'];
  /** The tool that asks (AskUserQuestion for questions). */
  readonly tool: string;
  /** approval: the tool's category (command, file_write, …). */
  readonly category?: string;
  /** approval: the agent's one-line description of the call, when it gave one; never the tool's input (a command may hold a secret). */
  readonly summary: string | null;
  /** question_set: each question and its option labels. */
  readonly questions?: ReadonlyArray<{ header: string; question: string; options: string[] }>;
}

export interface NotificationLinks {
  /** The session in the web UI (which asks for its own token); absent when the daemon serves no UI. */
  readonly open?: string;
  /** One-time: answers the approval with "approve once". */
  readonly approve?: string;
  /** One-time: answers the approval with "deny". */
  readonly deny?: string;
}

/** What a receiver gets (docs/notifications.md). */
export interface NotificationBody {
  readonly version: 1;
  /** Stays the same over retries: a receiver drops a repeat it has seen. */
  readonly id: string;
  readonly kind: NotificationKind;
  /** When the event happened (ISO-8601). */
  readonly at: string;
  readonly session: { id: string; title: string | null; workspacePath: string | null };
  readonly runId: string | null;
  readonly interaction?: InteractionSummary;
  /** errorReason and resetsAt: a plan limit's (`plan_limit`, and when the account may send turns again). */
  readonly run?: {
    outcome: RunOutcome;
    errorCode?: string;
    errorReason?: string;
    resetsAt?: string;
    stopReason?: StopReason;
  };
  readonly waitingSeconds?: number;
  readonly links: NotificationLinks;
}

function isControl(code: number): boolean {
  return code < 0x20 || (code >= 0x7f && code <= 0x9f);
}

/**
 * Model text as characters a receiver can show: terminal escape sequences out (a whole sequence: its
 * ESC alone would leave "[31m"), other control characters as spaces (line breaks and tabs kept when
 * asked), bidirectional controls written out (`<U+202E>`: the text reads in its own order). Whole
 * characters, so a cut never halves a surrogate pair (no UTF-8 a receiver can encode).
 */
function shownCharacters(text: string, keepLines: boolean): string[] {
  const kept = Array.from(stripTerminalEscapes(text), (character) =>
    isControl(character.codePointAt(0) ?? 0) && !(keepLines && (character === '\n' || character === '\t'))
      ? ' '
      : character,
  ).join('');
  return Array.from(writeOutBidirectionalControls(keepLines ? kept : kept.replace(/\s+/g, ' ').trim()));
}

/** Model text as one short line: whitespace collapsed, cut with an ellipsis. */
export function boundedText(text: string, limit: number): string {
  const characters = shownCharacters(text, false);
  return characters.length <= limit
    ? characters.join('')
    : `${characters
        .slice(0, limit - 1)
        .join('')
        .trimEnd()}…`;
}

function approvalSummary(request: Extract<InteractionRequest, { kind: 'approval' }>): string | null {
  const described = request.description ?? request.input?.['description'];
  return typeof described === 'string' && described.trim() !== ''
    ? boundedText(described, notificationTextLimits.summary)
    : null;
}

/** Model text kept as lines, for a page that shows it whole: cut with a line saying how much was left out. */
function boundedBlock(text: string, limit: number): string {
  const characters = shownCharacters(text, true);
  if (characters.length <= limit) return characters.join('');
  const left = characters.length - limit;
  return `${characters.slice(0, limit).join('')}\n… ${left} more characters not shown: open the session to see the whole input.`;
}

/**
 * What an approval's call would do, from its input (model-authored): a command's text for Bash, the
 * whole input for any other tool (a field picked by name could be the harmless one beside what runs);
 * null when the host asked for no input. Shown on the one-time link's page beside the agent's
 * description, which the model wrote and nothing checks.
 */
export function approvalAction(request: Extract<InteractionRequest, { kind: 'approval' }>): string | null {
  const input = request.input;
  if (input === null) return null;
  const command = request.toolName === 'Bash' ? input['command'] : undefined;
  const text = typeof command === 'string' ? command : JSON.stringify(input, null, 2);
  return text.trim() === '' ? null : boundedBlock(text, notificationTextLimits.action);
}

export function summarizeInteraction(interactionRef: string, request: InteractionRequest): InteractionSummary {
  if (request.kind === 'approval')
    return {
      ref: interactionRef,
      kind: 'approval',
      tool: request.toolName,
      category: request.category,
      summary: approvalSummary(request),
    };
  return {
    ref: interactionRef,
    kind: 'question_set',
    tool: 'AskUserQuestion',
    summary: null,
    questions: request.questions.map((question) => ({
      header: boundedText(question.header, notificationTextLimits.label),
      question: boundedText(question.question, notificationTextLimits.question),
      options: question.options.map((option) => boundedText(option.label, notificationTextLimits.label)),
    })),
  };
}

/** The session as a notification names it; null facts when the session is gone already. */
export function sessionFacts(sessionId: string, snapshot: SessionSnapshot | null): NotificationBody['session'] {
  if (snapshot === null) return { id: sessionId, title: null, workspacePath: null };
  const workspace = snapshot.workspace;
  return {
    id: sessionId,
    title: snapshot.title === null ? null : boundedText(snapshot.title, notificationTextLimits.title),
    workspacePath:
      snapshot.workspaceStatus?.directory ?? (workspace.kind === 'directory' ? workspace.path : workspace.repository),
  };
}

export function newNotificationId(): string {
  return `ntf_${randomBytes(16).toString('hex')}`;
}

/** A run's end as a notification tells it: how it ended and why, never the error's message (it may quote the model). */
export function runSummary(event: Extract<ProtocolEvent, { type: 'run.completed' }>): NotificationBody['run'] {
  const details = event.error?.details;
  return {
    outcome: event.outcome,
    ...(event.error === undefined ? {} : { errorCode: event.error.code }),
    ...(details?.reason === undefined ? {} : { errorReason: details.reason }),
    ...(details?.resetsAt === undefined ? {} : { resetsAt: details.resetsAt }),
    ...(event.stopReason === undefined ? {} : { stopReason: event.stopReason }),
  };
}
