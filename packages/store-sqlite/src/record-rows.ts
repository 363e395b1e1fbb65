import type { StoredBlob } from '@tether/protocol';
import {
  type InteractionRecord,
  type RowReading,
  type RunRecord,
  type SessionRecord,
  storedRowReaders,
} from '@tether/runtime';
import type { SQLInputValue } from 'node:sqlite';

// JSON columns are text here; the runtime's readers report one that does not parse as a corrupted row.
const reading: RowReading = {
  json: (column) => JSON.parse(String(column)),
  remedy: 'Restore the data directory from a backup, or move it aside and start a new one.',
};

interface BlobRow {
  readonly media_type: string;
  readonly bytes: Uint8Array;
}

type NamedParameters = Record<string, SQLInputValue>;

function jsonOrNull(value: object | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
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
    queuedInputs: jsonOrNull(session.queuedInputs),
    limits: jsonOrNull(session.limits),
    contextUsage: jsonOrNull(session.contextUsage),
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

export const { sessionFromRow, runFromRow, interactionFromRow, receiptFromRow, eventFromRow } =
  storedRowReaders(reading);

export function blobFromRow(row: unknown): StoredBlob {
  const blob = row as BlobRow;
  return { mediaType: blob.media_type, bytes: blob.bytes };
}
