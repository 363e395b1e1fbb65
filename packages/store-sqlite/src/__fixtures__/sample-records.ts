import type { ProtocolEvent } from '@tether/protocol';
import type { CommitUnit, SessionRecord } from '@tether/runtime';

export const sessionId = `ses_${'1'.repeat(32)}`;
export const runId = `run_${'2'.repeat(32)}`;
const at = '2025-01-02T03:04:05.000Z';

export function sessionRecord(lastSeq: number): SessionRecord {
  return {
    sessionId,
    provider: 'claude',
    workspace: { kind: 'directory', path: '/work/project' },
    workspaceStatus: null,
    configuration: { model: 'sonnet' },
    ephemeral: false,
    redactInput: false,
    state: 'running',
    activeRunId: runId,
    permissionMode: null,
    model: null,
    liveProcess: null,
    providerSessionId: null,
    forkedFrom: null,
    copyConversation: null,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    title: null,
    lastRun: null,
    lastSeq,
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
  };
}

/** Message deltas `from`..`to` of one run, the shape that dominates a real log. */
export function messageDeltas(from: number, to: number): ProtocolEvent[] {
  const events: ProtocolEvent[] = [];
  for (let seq = from; seq <= to; seq += 1) {
    events.push({ type: 'run.message_delta', sessionId, seq, at, runId, blockId: 'block-1', text: `token ${seq} ` });
  }
  return events;
}

/** A unit carrying events `from`..`to`, its session, its run and one receipt. */
export function sampleUnit(from: number, to: number): CommitUnit {
  return {
    events: messageDeltas(from, to),
    sessions: [sessionRecord(to)],
    runs: [{ runId, sessionId, status: 'running', outcome: null, error: null, usage: null, startedAt: at, completedAt: null, checkpoint: null }],
    interactions: [],
    receipts: [{ commandId: `cmd-${from}`, fingerprint: 'fingerprint', receipt: { type: 'submit_turn', commandId: `cmd-${from}`, sessionId, runId }, at }],
    blobs: [],
  };
}
