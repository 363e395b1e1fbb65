import type {
  InteractionKind,
  InteractionRequest,
  ProtocolEvent,
  Receipt,
  RunOutcome,
  SessionConfiguration,
  SerializedAgentError,
  StoredBlob,
  TokenUsage,
  Workspace,
  WorkspaceStatus,
} from '@tether/protocol';
import type { InteractionRecord, RunRecord, SessionRecord, StoredReceipt } from '@tether/runtime';
import type { SQLInputValue } from 'node:sqlite';
import { storeFailure } from './store-failure.js';

// Row shapes as the STRICT tables guarantee them; only the JSON inside needs checking.
interface SessionRow {
  readonly session_id: string;
  readonly provider: string;
  readonly workspace: string;
  readonly configuration: string;
  readonly ephemeral: number;
  readonly redact_input: number;
  readonly state: string;
  readonly active_run_id: string | null;
  readonly permission_mode: string | null;
  readonly model: string | null;
  readonly live_process: string | null;
  readonly provider_session_id: string | null;
  readonly usage: string;
  readonly title: string | null;
  readonly last_run_id: string | null;
  readonly last_run_outcome: string | null;
  readonly last_run_completed_at: string | null;
  readonly last_seq: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_activity_at: string | null;
  readonly forked_from: string | null;
  readonly copy_conversation: string | null;
  readonly workspace_status: string | null;
}

interface RunRow {
  readonly run_id: string;
  readonly session_id: string;
  readonly status: string;
  readonly outcome: string | null;
  readonly error: string | null;
  readonly usage: string | null;
  readonly started_at: string;
  readonly completed_at: string | null;
  readonly checkpoint: string | null;
}

interface InteractionRow {
  readonly session_id: string;
  readonly interaction_ref: string;
  readonly run_id: string;
  readonly status: string;
  readonly request: string;
  readonly requested_at: string;
  readonly settled_at: string | null;
}

interface ReceiptRow {
  readonly command_id: string;
  readonly fingerprint: string;
  readonly receipt: string;
  readonly at: string;
}

interface BlobRow {
  readonly media_type: string;
  readonly bytes: Uint8Array;
}

interface EventRow {
  readonly session_id: string;
  readonly seq: number;
  readonly data: string;
}

type NamedParameters = Record<string, SQLInputValue>;

function corrupted(what: string): never {
  throw storeFailure(
    `The stored ${what} is unreadable (a corrupted row). Restore the data directory from a backup, or move it aside and start a new one.`,
    'corrupted_row',
  );
}

/** Parses a JSON column that must hold an object. */
function parseObject<Value>(text: string, what: string): Value {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return corrupted(what);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return corrupted(what);
  return parsed as Value;
}

function parseNullableObject<Value>(text: string | null, what: string): Value | null {
  return text === null ? null : parseObject<Value>(text, what);
}

function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

export function sessionParameters(session: SessionRecord): NamedParameters {
  return {
    sessionId: session.sessionId,
    provider: session.provider,
    workspace: JSON.stringify(session.workspace),
    configuration: JSON.stringify(session.configuration),
    ephemeral: session.ephemeral ? 1 : 0,
    redactInput: session.redactInput ? 1 : 0,
    state: session.state,
    activeRunId: session.activeRunId,
    permissionMode: session.permissionMode,
    model: session.model,
    liveProcess: jsonOrNull(session.liveProcess),
    providerSessionId: session.providerSessionId,
    usage: JSON.stringify(session.usage),
    title: session.title,
    lastRunId: session.lastRun?.runId ?? null,
    lastRunOutcome: session.lastRun?.outcome ?? null,
    lastRunCompletedAt: session.lastRun?.completedAt ?? null,
    lastSeq: session.lastSeq,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    lastActivityAt: session.lastActivityAt,
    forkedFrom: jsonOrNull(session.forkedFrom),
    copyConversation: jsonOrNull(session.copyConversation),
    workspaceStatus: jsonOrNull(session.workspaceStatus),
  };
}

/** The columns the session listing indexes cover that change over a session's life (see store-statements.ts). */
export function sessionListingParameters(session: SessionRecord): NamedParameters {
  return {
    sessionId: session.sessionId,
    state: session.state,
    liveProcess: jsonOrNull(session.liveProcess),
  };
}

function lastRunFromRow(session: SessionRow): SessionRecord['lastRun'] {
  if (session.last_run_id === null || session.last_run_outcome === null || session.last_run_completed_at === null)
    return null;
  return {
    runId: session.last_run_id,
    outcome: session.last_run_outcome as RunOutcome,
    completedAt: session.last_run_completed_at,
  };
}

export function sessionFromRow(row: unknown): SessionRecord {
  const session = row as SessionRow;
  const what = `session ${session.session_id}`;
  return {
    sessionId: session.session_id,
    provider: session.provider,
    workspace: parseObject<Workspace>(session.workspace, what),
    workspaceStatus: parseNullableObject<WorkspaceStatus>(session.workspace_status, what),
    configuration: parseObject<SessionConfiguration>(session.configuration, what),
    ephemeral: session.ephemeral === 1,
    redactInput: session.redact_input === 1,
    state: session.state as SessionRecord['state'],
    activeRunId: session.active_run_id,
    permissionMode: session.permission_mode as SessionRecord['permissionMode'],
    model: session.model ?? null,
    liveProcess:
      session.live_process === null || session.live_process === undefined
        ? null
        : parseObject<NonNullable<SessionRecord['liveProcess']>>(session.live_process, what),
    providerSessionId: session.provider_session_id,
    forkedFrom: parseNullableObject<SessionRecord['forkedFrom']>(session.forked_from, what),
    copyConversation: parseNullableObject<SessionRecord['copyConversation']>(session.copy_conversation, what),
    usage: parseObject<TokenUsage>(session.usage, what),
    title: session.title,
    lastRun: lastRunFromRow(session),
    lastSeq: session.last_seq,
    createdAt: session.created_at,
    updatedAt: session.updated_at,
    // Every row is filled by migration 4; the fallback only types the nullable column.
    lastActivityAt: session.last_activity_at ?? session.created_at,
  };
}

export function runParameters(run: RunRecord): NamedParameters {
  return {
    runId: run.runId,
    sessionId: run.sessionId,
    status: run.status,
    outcome: run.outcome,
    error: jsonOrNull(run.error),
    usage: jsonOrNull(run.usage),
    startedAt: run.startedAt,
    completedAt: run.completedAt,
    checkpoint: jsonOrNull(run.checkpoint),
  };
}

export function runFromRow(row: unknown): RunRecord {
  const run = row as RunRow;
  const what = `run ${run.run_id}`;
  return {
    runId: run.run_id,
    sessionId: run.session_id,
    status: run.status as RunRecord['status'],
    outcome: run.outcome as RunRecord['outcome'],
    error: parseNullableObject<SerializedAgentError>(run.error, what),
    usage: parseNullableObject<TokenUsage>(run.usage, what),
    startedAt: run.started_at,
    completedAt: run.completed_at,
    checkpoint: parseNullableObject<RunRecord['checkpoint']>(run.checkpoint, what),
  };
}

// A Record over the kinds, so adding a kind to the protocol fails to compile until it is listed.
const interactionKinds: Readonly<Record<InteractionKind, true>> = { approval: true, question_set: true };

export function interactionParameters(interaction: InteractionRecord): NamedParameters {
  return {
    sessionId: interaction.sessionId,
    interactionRef: interaction.interactionRef,
    runId: interaction.runId,
    status: interaction.status,
    request: JSON.stringify(interaction.request),
    requestedAt: interaction.requestedAt,
    settledAt: interaction.settledAt,
  };
}

/** The interaction in a row; its request must be an object of a kind the runtime can handle. */
export function interactionFromRow(row: unknown): InteractionRecord {
  const interaction = row as InteractionRow;
  const what = `interaction ${interaction.interaction_ref} of session ${interaction.session_id}`;
  const request = parseObject<Partial<InteractionRequest>>(interaction.request, what);
  if (typeof request.kind !== 'string' || !Object.hasOwn(interactionKinds, request.kind)) return corrupted(what);
  return {
    interactionRef: interaction.interaction_ref,
    sessionId: interaction.session_id,
    runId: interaction.run_id,
    status: interaction.status as InteractionRecord['status'],
    request: request as InteractionRequest,
    requestedAt: interaction.requested_at,
    settledAt: interaction.settled_at,
  };
}

export function receiptFromRow(row: unknown): StoredReceipt {
  const receipt = row as ReceiptRow;
  return {
    commandId: receipt.command_id,
    fingerprint: receipt.fingerprint,
    receipt: parseObject<Receipt>(receipt.receipt, `receipt of command ${receipt.command_id}`),
    at: receipt.at,
  };
}

export function blobFromRow(row: unknown): StoredBlob {
  const blob = row as BlobRow;
  return { mediaType: blob.media_type, bytes: blob.bytes };
}

/** The event in a row, checked to be the one the row's columns say it is. */
export function eventFromRow(row: unknown): ProtocolEvent {
  const stored = row as EventRow;
  const what = `event ${stored.seq} of session ${stored.session_id}`;
  const event = parseObject<Partial<ProtocolEvent>>(stored.data, what);
  if (event.sessionId !== stored.session_id || event.seq !== stored.seq || typeof event.type !== 'string')
    return corrupted(what);
  return event as ProtocolEvent;
}
