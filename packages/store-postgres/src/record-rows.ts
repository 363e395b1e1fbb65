import type { ProtocolEvent, StoredBlob } from '@tether/protocol';
import {
  type InteractionRecord,
  type RowReading,
  type SessionRecord,
  type StoredReceipt,
  storedRowReaders,
} from '@tether/runtime';

// Rows come from node-postgres with json columns already parsed (so the title, a json string, is a
// string), bigint as a decimal string and bytea as a Buffer; the runtime's readers take them as they are.
const reading: RowReading = {
  json: (column) => column,
  remedy: 'Restore the database from a backup, or delete the session.',
};

interface BlobRow {
  readonly media_type: string;
  readonly bytes: Uint8Array;
}

/** A json parameter: the text node-postgres sends as is (it would turn an array into a PostgreSQL array). */
function json(value: object): string {
  return JSON.stringify(value);
}

function jsonOrNull(value: object | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
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
  'queued_inputs',
  'limits',
  'context_usage',
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
    jsonOrNull(session.queuedInputs),
    jsonOrNull(session.limits),
    jsonOrNull(session.contextUsage),
  ];
}

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

export function receiptParameters(receipt: StoredReceipt): unknown[] {
  return [receipt.commandId, receipt.fingerprint, json(receipt.receipt), receipt.at];
}

export const { sessionFromRow, runFromRow, interactionFromRow, receiptFromRow, eventFromRow } =
  storedRowReaders(reading);

export function blobFromRow(row: unknown): StoredBlob {
  const blob = row as BlobRow;
  // A copy: the driver's Buffer may be a view into a larger one it reuses.
  return { mediaType: blob.media_type, bytes: Uint8Array.from(blob.bytes) };
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
