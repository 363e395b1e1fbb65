import type { DatabaseSync } from 'node:sqlite';
import type { EventBody, RunOutcome } from '@tether/protocol';
import type { SessionRecord } from '@tether/runtime';

// Sessions as version 3 stored them (before titles, last runs and last activity), with what migration 4 makes of them.

const minute = (value: number) => `2025-01-02T03:${String(value).padStart(2, '0')}:00.000Z`;
export const titledId = `ses_${'a'.repeat(32)}`;
export const redactedId = `ses_${'b'.repeat(32)}`;
export const newId = `ses_${'c'.repeat(32)}`;
const runIds = [1, 2, 3, 4].map((digit) => `run_${String(digit).repeat(32)}`) as [string, string, string, string];
const text = (...parts: string[]) => parts.map((part) => ({ type: 'text' as const, text: part }));
const opened: EventBody = { type: 'session.opened', provider: 'claude', workspace: { kind: 'directory', path: '/work/project' }, configuration: {}, ephemeral: false, reopened: false };

interface LegacyRun {
  readonly runId: string;
  readonly outcome: RunOutcome;
  readonly startedAt: string;
  readonly completedAt: string;
}

interface LegacySession {
  readonly sessionId: string;
  readonly redactInput: boolean;
  readonly createdAt: string;
  /** Each event with the minute it was recorded at. */
  readonly events: readonly (readonly [EventBody, number])[];
  readonly runs: readonly LegacyRun[];
}

export const legacySessions: readonly LegacySession[] = [
  {
    // A control first (it names nothing), then two turns and a process release after the last run.
    sessionId: titledId,
    redactInput: false,
    createdAt: minute(1),
    events: [
      [opened, 1],
      [{ type: 'run.started', runId: runIds[0], input: text('/compact'), inputRedacted: false, control: { name: 'compact' } }, 2],
      [{ type: 'control.completed', runId: runIds[0], name: 'compact', status: 'succeeded', output: '' }, 2],
      [{ type: 'run.completed', runId: runIds[0], outcome: 'succeeded' }, 3],
      [{ type: 'run.started', runId: runIds[1], input: text('  Fix the\n\n build ', 'please'), inputRedacted: false }, 4],
      [{ type: 'run.message_delta', runId: runIds[1], blockId: 'block-1', text: 'On it.' }, 5],
      [{ type: 'run.completed', runId: runIds[1], outcome: 'failed', error: { code: 'provider_crashed', message: 'The agent process exited.', retryable: true } }, 6],
      [{ type: 'run.started', runId: runIds[2], input: text('Second turn'), inputRedacted: false }, 7],
      [{ type: 'run.completed', runId: runIds[2], outcome: 'interrupted' }, 8],
      [{ type: 'session.process_stopped', reason: 'idle' }, 9],
      [{ type: 'diagnostic', level: 'info', code: 'late.note' }, 10],
    ],
    runs: [
      { runId: runIds[0], outcome: 'succeeded', startedAt: minute(2), completedAt: minute(3) },
      { runId: runIds[1], outcome: 'failed', startedAt: minute(4), completedAt: minute(6) },
      { runId: runIds[2], outcome: 'interrupted', startedAt: minute(7), completedAt: minute(8) },
    ],
  },
  {
    sessionId: redactedId,
    redactInput: true,
    createdAt: minute(1),
    events: [
      [opened, 1],
      [{ type: 'run.started', runId: runIds[3], input: null, inputRedacted: true }, 2],
      [{ type: 'run.completed', runId: runIds[3], outcome: 'succeeded' }, 3],
    ],
    runs: [{ runId: runIds[3], outcome: 'succeeded', startedAt: minute(2), completedAt: minute(3) }],
  },
  { sessionId: newId, redactInput: false, createdAt: minute(5), events: [[opened, 5]], runs: [] },
];

/** Writes the sessions in the schema of version 3 (before titles, last runs and last activity). */
export function writeVersion3Sessions(database: DatabaseSync): void {
  const insertSession = database.prepare(`
    INSERT INTO sessions (session_id, provider, workspace, configuration, ephemeral, redact_input, state, active_run_id, permission_mode, model, live_process, provider_session_id, usage, last_seq, created_at, updated_at)
    VALUES (?, 'claude', '{"kind":"directory","path":"/work/project"}', '{}', 0, ?, 'idle', NULL, NULL, NULL, NULL, NULL, ?, ?, ?, ?)`);
  const insertRun = database.prepare(`INSERT INTO runs (run_id, session_id, status, outcome, error, usage, started_at, completed_at) VALUES (?, ?, 'completed', ?, NULL, NULL, ?, ?)`);
  const insertEvent = database.prepare('INSERT INTO events (session_id, seq, type, run_id, at, data) VALUES (?, ?, ?, ?, ?, ?)');
  const usage = JSON.stringify({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null });
  for (const session of legacySessions) {
    const lastMinute = session.events.at(-1)![1];
    insertSession.run(session.sessionId, session.redactInput ? 1 : 0, usage, session.events.length, session.createdAt, minute(lastMinute));
    for (const run of session.runs) insertRun.run(run.runId, session.sessionId, run.outcome, run.startedAt, run.completedAt);
    session.events.forEach(([body, at], index) => {
      const event = { ...body, sessionId: session.sessionId, seq: index + 1, at: minute(at) };
      insertEvent.run(session.sessionId, event.seq, event.type, 'runId' in body ? (body.runId ?? null) : null, event.at, JSON.stringify(event));
    });
  }
}

/** What migration 4 fills in for each of them. */
export const expectedSummaries: Readonly<Record<string, Pick<SessionRecord, 'title' | 'lastRun' | 'lastActivityAt'>>> = {
  [titledId]: { title: 'Fix the build please', lastRun: { runId: runIds[2], outcome: 'interrupted', completedAt: minute(8) }, lastActivityAt: minute(8) },
  [redactedId]: { title: null, lastRun: { runId: runIds[3], outcome: 'succeeded', completedAt: minute(3) }, lastActivityAt: minute(3) },
  [newId]: { title: null, lastRun: null, lastActivityAt: minute(5) },
};
