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
import { storeFailure } from './store-failure.js';

// Rows as node-postgres gives them: json columns already parsed, bigint as a decimal string, bytea as a Buffer.
type Json = unknown;

interface SessionRow {
  readonly session_id: string;
  readonly provider: string;
  readonly workspace: Json;
  readonly workspace_status: Json;
  readonly configuration: Json;
  readonly ephemeral: boolean;
  readonly redact_input: boolean;
  readonly state: string;
  readonly active_run_id: string | null;
  readonly permission_mode: string | null;
  readonly model: string | null;
  readonly live_process: Json;
  readonly provider_session_id: string | null;
  readonly forked_from: Json;
  readonly copy_conversation: Json;
  readonly usage: Json;
  readonly title: Json;
  readonly last_run_id: string | null;
  readonly last_run_outcome: string | null;
  readonly last_run_completed_at: string | null;
  readonly last_seq: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_activity_at: string;
}

interface RunRow {
  readonly run_id: string;
  readonly session_id: string;
  readonly status: string;
  readonly outcome: string | null;
  readonly error: Json;
  readonly usage: Json;
  readonly started_at: string;
  readonly completed_at: string | null;
  readonly checkpoint: Json;
}

interface InteractionRow {
  readonly session_id: string;
  readonly interaction_ref: string;
  readonly run_id: string;
  readonly status: string;
  readonly request: Json;
  readonly requested_at: string;
  readonly settled_at: string | null;
}

interface ReceiptRow {
  readonly command_id: string;
  readonly fingerprint: string;
  readonly receipt: Json;
  readonly at: string;
}

interface BlobRow {
  readonly media_type: string;
  readonly bytes: Uint8Array;
}

interface EventRow {
  readonly session_id: string;
  readonly seq: string;
  readonly data: Json;
}

function corrupted(what: string): never {
  throw storeFailure(
    `The stored ${what} is unreadable (a corrupted row). Restore the database from a backup, or delete the session.`,
    'corrupted_row',
  );
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A json column that must hold an object. */
function objectOf<Value>(value: Json, what: string): Value {
  return isObject(value) ? (value as Value) : corrupted(what);
}

function nullableObjectOf<Value>(value: Json, what: string): Value | null {
  return value === null || value === undefined ? null : objectOf<Value>(value, what);
}

function titleOf(value: Json, what: string): string | null {
  if (value === null || typeof value === 'string') return value;
  return corrupted(what);
}

/** A json parameter: the text node-postgres sends as is (it would turn an array into a PostgreSQL array). */
function json(value: object): string {
  return JSON.stringify(value);
}

function jsonOrNull(value: object | null): string | null {
  return value === null ? null : JSON.stringify(value);
}

/** The columns of `sessions` the upsert writes, in the order of sessionParameters. */
export const sessionColumns = [
  'session_id',
  'provider',
  'workspace',
  'workspace_status',
  'configuration',
  'ephemeral',
  'redact_input',
  'state',
  'active_run_id',
  'permission_mode',
  'model',
  'live_process',
  'provider_session_id',
  'forked_from',
  'copy_conversation',
  'usage',
  'title',
  'last_run_id',
  'last_run_outcome',
  'last_run_completed_at',
  'last_seq',
  'created_at',
  'updated_at',
  'last_activity_at',
] as const;

export function sessionParameters(session: SessionRecord): unknown[] {
  return [
    session.sessionId,
    session.provider,
    json(session.workspace),
    jsonOrNull(session.workspaceStatus),
    json(session.configuration),
    session.ephemeral,
    session.redactInput,
    session.state,
    session.activeRunId,
    session.permissionMode,
    session.model,
    jsonOrNull(session.liveProcess),
    session.providerSessionId,
    jsonOrNull(session.forkedFrom),
    jsonOrNull(session.copyConversation),
    json(session.usage),
    session.title === null ? null : JSON.stringify(session.title),
    session.lastRun?.runId ?? null,
    session.lastRun?.outcome ?? null,
    session.lastRun?.completedAt ?? null,
    session.lastSeq,
    session.createdAt,
    session.updatedAt,
    session.lastActivityAt,
  ];
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
    workspace: objectOf<Workspace>(session.workspace, what),
    workspaceStatus: nullableObjectOf<WorkspaceStatus>(session.workspace_status, what),
    configuration: objectOf<SessionConfiguration>(session.configuration, what),
    ephemeral: session.ephemeral,
    redactInput: session.redact_input,
    state: session.state as SessionRecord['state'],
    activeRunId: session.active_run_id,
    permissionMode: session.permission_mode as SessionRecord['permissionMode'],
    model: session.model,
    liveProcess: nullableObjectOf<NonNullable<SessionRecord['liveProcess']>>(session.live_process, what),
    providerSessionId: session.provider_session_id,
    forkedFrom: nullableObjectOf<SessionRecord['forkedFrom']>(session.forked_from, what),
    copyConversation: nullableObjectOf<SessionRecord['copyConversation']>(session.copy_conversation, what),
    usage: objectOf<TokenUsage>(session.usage, what),
    title: titleOf(session.title, what),
    lastRun: lastRunFromRow(session),
    lastSeq: Number(session.last_seq),
    createdAt: session.created_at,
    updatedAt: session.updated_at,
    lastActivityAt: session.last_activity_at,
  };
}

export const runColumns = [
  'run_id',
  'session_id',
  'status',
  'outcome',
  'error',
  'usage',
  'started_at',
  'completed_at',
  'checkpoint',
] as const;

export function runParameters(run: RunRecord): unknown[] {
  return [
    run.runId,
    run.sessionId,
    run.status,
    run.outcome,
    jsonOrNull(run.error),
    jsonOrNull(run.usage),
    run.startedAt,
    run.completedAt,
    jsonOrNull(run.checkpoint),
  ];
}

export function runFromRow(row: unknown): RunRecord {
  const run = row as RunRow;
  const what = `run ${run.run_id}`;
  return {
    runId: run.run_id,
    sessionId: run.session_id,
    status: run.status as RunRecord['status'],
    outcome: run.outcome as RunRecord['outcome'],
    error: nullableObjectOf<SerializedAgentError>(run.error, what),
    usage: nullableObjectOf<TokenUsage>(run.usage, what),
    startedAt: run.started_at,
    completedAt: run.completed_at,
    checkpoint: nullableObjectOf<RunRecord['checkpoint']>(run.checkpoint, what),
  };
}

// A Record over the kinds, so adding a kind to the protocol fails to compile until it is listed.
const interactionKinds: Readonly<Record<InteractionKind, true>> = { approval: true, question_set: true };

export const interactionColumns = [
  'session_id',
  'interaction_ref',
  'run_id',
  'status',
  'request',
  'requested_at',
  'settled_at',
] as const;

export function interactionParameters(interaction: InteractionRecord): unknown[] {
  return [
    interaction.sessionId,
    interaction.interactionRef,
    interaction.runId,
    interaction.status,
    json(interaction.request),
    interaction.requestedAt,
    interaction.settledAt,
  ];
}

/** The interaction in a row; its request must be an object of a kind the runtime can handle. */
export function interactionFromRow(row: unknown): InteractionRecord {
  const interaction = row as InteractionRow;
  const what = `interaction ${interaction.interaction_ref} of session ${interaction.session_id}`;
  const request = objectOf<Partial<InteractionRequest>>(interaction.request, what);
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

export function receiptParameters(receipt: StoredReceipt): unknown[] {
  return [receipt.commandId, receipt.fingerprint, json(receipt.receipt), receipt.at];
}

export function receiptFromRow(row: unknown): StoredReceipt {
  const receipt = row as ReceiptRow;
  return {
    commandId: receipt.command_id,
    fingerprint: receipt.fingerprint,
    receipt: objectOf<Receipt>(receipt.receipt, `receipt of command ${receipt.command_id}`),
    at: receipt.at,
  };
}

export function blobFromRow(row: unknown): StoredBlob {
  const blob = row as BlobRow;
  // A copy: the driver's Buffer may be a view into a larger one it reuses.
  return { mediaType: blob.media_type, bytes: Uint8Array.from(blob.bytes) };
}

/** The event in a row, checked to be the one the row's columns say it is. */
export function eventFromRow(row: unknown): ProtocolEvent {
  const stored = row as EventRow;
  const what = `event ${stored.seq} of session ${stored.session_id}`;
  const event = objectOf<Partial<ProtocolEvent>>(stored.data, what);
  if (event.sessionId !== stored.session_id || event.seq !== Number(stored.seq) || typeof event.type !== 'string')
    return corrupted(what);
  return event as ProtocolEvent;
}

function runIdOf(event: ProtocolEvent): string | null {
  return (event as { runId?: string }).runId ?? null;
}

/** The unit's events as column arrays, for one INSERT … SELECT FROM unnest(…). */
export function eventColumnArrays(events: readonly ProtocolEvent[]): unknown[] {
  return [
    events.map((event) => event.sessionId),
    events.map((event) => event.seq),
    events.map((event) => event.type),
    events.map(runIdOf),
    events.map((event) => event.at),
    events.map((event) => JSON.stringify(event)),
  ];
}
