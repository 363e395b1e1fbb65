import {
  AgentError,
  type ContextUsage,
  type InteractionKind,
  type InteractionRequest,
  type PlanLimits,
  type ProtocolEvent,
  type QueuedInput,
  type Receipt,
  type RunOutcome,
  type SerializedAgentError,
  type SessionConfiguration,
  type TokenUsage,
  type Workspace,
  type WorkspaceStatus,
} from '@tether/protocol';
import type { InteractionRecord, RunRecord, SessionRecord, StoredReceipt } from './tether-store.js';

/**
 * Reading the port's records back from the rows of a database store. The SQLite and PostgreSQL
 * stores keep the same columns under the same names; what differs is how a JSON column arrives (text
 * to parse in SQLite, a value the driver has parsed in PostgreSQL), which each store gives here.
 */
export interface RowReading {
  /** The value a JSON column holds; may throw when it holds none (text that does not parse). */
  readonly json: (column: unknown) => unknown;
  /** What the user can do about a corrupted row: the end of its message. */
  readonly remedy: string;
}

// Columns whose representation differs between the stores are `unknown` (JSON) or widened (a
// boolean SQLite keeps as 0/1, a bigint PostgreSQL gives as a string).
interface SessionRow {
  readonly session_id: string;
  readonly provider: string;
  readonly workspace: unknown;
  readonly workspace_status: unknown;
  readonly configuration: unknown;
  readonly ephemeral: number | boolean;
  readonly redact_input: number | boolean;
  readonly state: string;
  readonly active_run_id: string | null;
  readonly permission_mode: string | null;
  readonly model: string | null | undefined;
  readonly live_process: unknown;
  readonly provider_session_id: string | null;
  readonly forked_from: unknown;
  readonly copy_conversation: unknown;
  readonly usage: unknown;
  readonly title: string | null;
  readonly last_run_id: string | null;
  readonly last_run_outcome: string | null;
  readonly last_run_completed_at: string | null;
  readonly last_seq: number | string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_activity_at: string | null;
  /** Absent in rows read by a query that predates them; null in rows written before them. */
  readonly queued_inputs?: unknown;
  readonly limits?: unknown;
  readonly context_usage?: unknown;
}

interface RunRow {
  readonly run_id: string;
  readonly session_id: string;
  readonly status: string;
  readonly outcome: string | null;
  readonly error: unknown;
  readonly usage: unknown;
  readonly started_at: string;
  readonly completed_at: string | null;
  readonly checkpoint: unknown;
}

interface InteractionRow {
  readonly session_id: string;
  readonly interaction_ref: string;
  readonly run_id: string;
  readonly status: string;
  readonly request: unknown;
  readonly requested_at: string;
  readonly settled_at: string | null;
}

interface ReceiptRow {
  readonly command_id: string;
  readonly fingerprint: string;
  readonly receipt: unknown;
  readonly at: string;
}

interface EventRow {
  readonly session_id: string;
  readonly seq: number | string;
  readonly data: unknown;
}

function corrupted(what: string, reading: RowReading): never {
  throw new AgentError({
    code: 'store_failure',
    message: `The stored ${what} is unreadable (a corrupted row). ${reading.remedy}`,
    details: { reason: 'corrupted_row' },
  });
}

/** A JSON column that must hold an object. */
function objectOf<Value>(column: unknown, what: string, reading: RowReading): Value {
  let value: unknown;
  try {
    value = reading.json(column);
  } catch {
    return corrupted(what, reading);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return corrupted(what, reading);
  return value as Value;
}

/** A nullable JSON column (undefined: a column older rows predate) that, when set, must hold an object. */
function nullableObjectOf<Value>(column: unknown, what: string, reading: RowReading): Value | null {
  return column === null || column === undefined ? null : objectOf<Value>(column, what, reading);
}

/** A nullable JSON column that, when set, must hold an array. */
function nullableArrayOf<Value>(column: unknown, what: string, reading: RowReading): Value[] | null {
  if (column === null || column === undefined) return null;
  let value: unknown;
  try {
    value = reading.json(column);
  } catch {
    return corrupted(what, reading);
  }
  return Array.isArray(value) ? (value as Value[]) : corrupted(what, reading);
}

/** The follow-ups, plan limits and context usage of a session row; left out where none were ever recorded. */
function followUpsAndLimitsOf(session: SessionRow, what: string, reading: RowReading): Partial<SessionRecord> {
  const queuedInputs = nullableArrayOf<QueuedInput>(session.queued_inputs, what, reading);
  const limits = nullableObjectOf<PlanLimits>(session.limits, what, reading);
  const contextUsage = nullableObjectOf<ContextUsage>(session.context_usage, what, reading);
  return {
    ...(queuedInputs ? { queuedInputs } : {}),
    ...(limits ? { limits } : {}),
    ...(contextUsage ? { contextUsage } : {}),
  };
}

function lastRunOf(session: SessionRow): SessionRecord['lastRun'] {
  if (session.last_run_id === null || session.last_run_outcome === null || session.last_run_completed_at === null)
    return null;
  return {
    runId: session.last_run_id,
    outcome: session.last_run_outcome as RunOutcome,
    completedAt: session.last_run_completed_at,
  };
}

function readSessionRow(row: unknown, reading: RowReading): SessionRecord {
  const session = row as SessionRow;
  const what = `session ${session.session_id}`;
  return {
    sessionId: session.session_id,
    provider: session.provider,
    workspace: objectOf<Workspace>(session.workspace, what, reading),
    workspaceStatus: nullableObjectOf<WorkspaceStatus>(session.workspace_status, what, reading),
    configuration: objectOf<SessionConfiguration>(session.configuration, what, reading),
    ephemeral: session.ephemeral === true || session.ephemeral === 1,
    redactInput: session.redact_input === true || session.redact_input === 1,
    state: session.state as SessionRecord['state'],
    activeRunId: session.active_run_id,
    permissionMode: session.permission_mode as SessionRecord['permissionMode'],
    model: session.model ?? null,
    liveProcess: nullableObjectOf<NonNullable<SessionRecord['liveProcess']>>(session.live_process, what, reading),
    providerSessionId: session.provider_session_id,
    forkedFrom: nullableObjectOf<SessionRecord['forkedFrom']>(session.forked_from, what, reading),
    copyConversation: nullableObjectOf<SessionRecord['copyConversation']>(session.copy_conversation, what, reading),
    usage: objectOf<TokenUsage>(session.usage, what, reading),
    title: session.title,
    lastRun: lastRunOf(session),
    lastSeq: Number(session.last_seq),
    createdAt: session.created_at,
    updatedAt: session.updated_at,
    // Null only in SQLite rows its migration 4 had not filled; the fallback types the nullable column.
    lastActivityAt: session.last_activity_at ?? session.created_at,
    ...followUpsAndLimitsOf(session, what, reading),
  };
}

function readRunRow(row: unknown, reading: RowReading): RunRecord {
  const run = row as RunRow;
  const what = `run ${run.run_id}`;
  return {
    runId: run.run_id,
    sessionId: run.session_id,
    status: run.status as RunRecord['status'],
    outcome: run.outcome as RunRecord['outcome'],
    error: nullableObjectOf<SerializedAgentError>(run.error, what, reading),
    usage: nullableObjectOf<TokenUsage>(run.usage, what, reading),
    startedAt: run.started_at,
    completedAt: run.completed_at,
    checkpoint: nullableObjectOf<RunRecord['checkpoint']>(run.checkpoint, what, reading),
  };
}

// A Record over the kinds, so adding a kind to the protocol fails to compile until it is listed.
const interactionKinds: Readonly<Record<InteractionKind, true>> = { approval: true, question_set: true };

/** The interaction in a row; its request must be an object of a kind the runtime can handle. */
function readInteractionRow(row: unknown, reading: RowReading): InteractionRecord {
  const interaction = row as InteractionRow;
  const what = `interaction ${interaction.interaction_ref} of session ${interaction.session_id}`;
  const request = objectOf<Partial<InteractionRequest>>(interaction.request, what, reading);
  if (typeof request.kind !== 'string' || !Object.hasOwn(interactionKinds, request.kind))
    return corrupted(what, reading);
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

function readReceiptRow(row: unknown, reading: RowReading): StoredReceipt {
  const receipt = row as ReceiptRow;
  return {
    commandId: receipt.command_id,
    fingerprint: receipt.fingerprint,
    receipt: objectOf<Receipt>(receipt.receipt, `receipt of command ${receipt.command_id}`, reading),
    at: receipt.at,
  };
}

/** The event in a row, checked to be the one the row's columns say it is. */
function readEventRow(row: unknown, reading: RowReading): ProtocolEvent {
  const stored = row as EventRow;
  const what = `event ${stored.seq} of session ${stored.session_id}`;
  const event = objectOf<Partial<ProtocolEvent>>(stored.data, what, reading);
  if (event.sessionId !== stored.session_id || event.seq !== Number(stored.seq) || typeof event.type !== 'string')
    return corrupted(what, reading);
  return event as ProtocolEvent;
}

/** A run's columns, as both database stores keep them, in the order of runRowValues. */
export const runRowColumns = [
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

function jsonTextOrNull(value: object | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

/** A run's row, the values of runRowColumns in order, its JSON columns as text (the reverse of readRunRow). */
export function runRowValues(run: RunRecord): (string | null)[] {
  return [
    run.runId,
    run.sessionId,
    run.status,
    run.outcome,
    jsonTextOrNull(run.error),
    jsonTextOrNull(run.usage),
    run.startedAt,
    run.completedAt,
    jsonTextOrNull(run.checkpoint),
  ];
}

/** The readers of a store's rows, each turning a row into its record or refusing it as corrupted_row. */
export function storedRowReaders(reading: RowReading) {
  return {
    sessionFromRow: (row: unknown) => readSessionRow(row, reading),
    runFromRow: (row: unknown) => readRunRow(row, reading),
    interactionFromRow: (row: unknown) => readInteractionRow(row, reading),
    receiptFromRow: (row: unknown) => readReceiptRow(row, reading),
    eventFromRow: (row: unknown) => readEventRow(row, reading),
  };
}
