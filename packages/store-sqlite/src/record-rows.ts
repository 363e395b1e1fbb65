import type { StoredBlob } from '@tether/protocol';
import { type InteractionRecord, type RowReading, type SessionRecord, storedRowReaders } from '@tether/runtime';
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

export type NamedParameters = Record<string, SQLInputValue>;

function jsonOrNull(value: object | null | undefined): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

type FieldParameters = (session: SessionRecord, parameters: NamedParameters) => void;
type Field = keyof SessionRecord;

const plain =
  (field: Field): FieldParameters =>
  (session, parameters) => {
    parameters[field] = (session[field] ?? null) as SQLInputValue;
  };
const flag =
  (field: Field): FieldParameters =>
  (session, parameters) => {
    parameters[field] = session[field] ? 1 : 0;
  };
const json =
  (field: Field): FieldParameters =>
  (session, parameters) => {
    parameters[field] = jsonOrNull(session[field] as object | null | undefined);
  };

/**
 * Each session field's columns, as named parameters: a parameter is its column's name in camelCase
 * (columnOf). A commit that changes a few fields binds and writes only theirs (session-updates.ts).
 */
export const sessionFieldParameters: { readonly [Name in keyof Required<SessionRecord>]: FieldParameters } = {
  sessionId: plain('sessionId'),
  provider: plain('provider'),
  workspace: json('workspace'),
  configuration: json('configuration'),
  ephemeral: flag('ephemeral'),
  redactInput: flag('redactInput'),
  state: plain('state'),
  activeRunId: plain('activeRunId'),
  permissionMode: plain('permissionMode'),
  model: plain('model'),
  liveProcess: json('liveProcess'),
  providerSessionId: plain('providerSessionId'),
  usage: json('usage'),
  title: plain('title'),
  lastRun: (session, parameters) => {
    parameters['lastRunId'] = session.lastRun?.runId ?? null;
    parameters['lastRunOutcome'] = session.lastRun?.outcome ?? null;
    parameters['lastRunCompletedAt'] = session.lastRun?.completedAt ?? null;
  },
  lastSeq: plain('lastSeq'),
  createdAt: plain('createdAt'),
  updatedAt: plain('updatedAt'),
  lastActivityAt: plain('lastActivityAt'),
  forkedFrom: json('forkedFrom'),
  copyConversation: json('copyConversation'),
  workspaceStatus: json('workspaceStatus'),
  queuedInputs: json('queuedInputs'),
  limits: json('limits'),
  contextUsage: json('contextUsage'),
};

/** The column a session parameter is written to: its name in snake case. */
export function columnOf(parameter: string): string {
  return parameter.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** Every column of the session's row, for the upsert that writes it whole. */
export function sessionParameters(session: SessionRecord): NamedParameters {
  const parameters: NamedParameters = {};
  for (const write of Object.values(sessionFieldParameters)) write(session, parameters);
  return parameters;
}

/** The columns the session listing indexes cover that change over a session's life (see store-statements.ts). */
export function sessionListingParameters(session: SessionRecord): NamedParameters {
  return {
    sessionId: session.sessionId,
    state: session.state,
    liveProcess: jsonOrNull(session.liveProcess),
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
