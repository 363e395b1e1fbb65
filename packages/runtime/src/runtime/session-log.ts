import {
  type CancelReason,
  type EventBody,
  type EventBodyOfType,
  type ProtocolEvent,
  type SerializedAgentError,
  isOpenInteraction,
} from '@tether/protocol';
import type { Change, EventWriter } from '../log/event-writer.js';
import { cancellations, evolveInteraction, sessionStateWith } from '../state/interaction-machine.js';
import { evolveRun, evolveSession } from '../state/session-machine.js';
import type { BlobRecord, InteractionRecord, RunRecord, SessionRecord, StoredReceipt } from '../store/tether-store.js';
import type { SessionEntry } from './session-entry.js';

const nothing: readonly never[] = [];

type DeltaBody = EventBodyOfType<'run.message_delta'> | EventBodyOfType<'run.thinking_delta'>;

let cachedMillisecond = 0;
let cachedTimestamp = '';

/** The current time as ISO text; formatted once per millisecond (a streamed turn asks thousands of times). */
export function now(): string {
  const millisecond = Date.now();
  if (millisecond !== cachedMillisecond) {
    cachedMillisecond = millisecond;
    cachedTimestamp = new Date(millisecond).toISOString();
  }
  return cachedTimestamp;
}

/** How a run ends that the agent stopped itself when the runtime's shutdown asked it to. */
export const runStoppedByShutdown = {
  code: 'runtime_stopped',
  message:
    'Tether shut down while this run was active (its daemon, or the command running it, was stopped). The session can go on: the agent keeps the turn as far as it got, so send a short turn such as "continue" to go on with it.',
  retryable: true,
} as const satisfies SerializedAgentError;

/**
 * The same, for a run the agent had not ended when the shutdown gave up on it (no grace, or its stop
 * not answered within the grace): its process was ended mid-turn, so what the agent keeps of the turn
 * is not known (not the unfinished answer; on a session's first turn, perhaps nothing).
 */
export const runCutOffByShutdown = {
  code: 'runtime_stopped',
  message:
    'Tether shut down while this run was active (its daemon, or the command running it, was stopped) and ended the agent before it could end the turn itself, so the agent does not keep the unfinished answer, and may not keep the prompt either (what it streamed is in the event log). The session can go on: send the prompt again.',
  retryable: true,
  details: { reason: 'cut_off' },
} as const satisfies SerializedAgentError;

/** The same, for a run that was still waiting for an agent process: it does not start in a shutdown's grace. */
export const runNotStartedByShutdown = {
  code: 'runtime_stopped',
  message:
    'Tether shut down while this turn waited for a free agent process, so the agent never got it. Send it again once Tether is running.',
  retryable: true,
  details: { reason: 'not_started' },
} as const satisfies SerializedAgentError;

/** The same, for a run still waiting for its workspace (a worktree's baseline): it does not reach the agent in a shutdown's grace. */
export const runNotHandedOverByShutdown = {
  ...runNotStartedByShutdown,
  message:
    'Tether shut down while this turn waited for its workspace to be ready, so the agent never got it. Send it again once Tether is running.',
} as const satisfies SerializedAgentError;

/**
 * Puts the cancellation of a run's open interactions right before its run.completed, then the end of
 * its tool calls still open (`failed`): whatever ends a run (its result, a crash, a close, a
 * shutdown) leaves no interaction pending and no call running. A call is left open when the agent
 * cannot end it any more (its process stopped) or ends it after the run (a subagent moved to the
 * background goes on past its caller's turn; its results reach no run).
 */
export function withRunEndCancellations(
  entry: SessionEntry,
  bodies: readonly EventBody[],
  reason: CancelReason,
): EventBody[] {
  const result: EventBody[] = [];
  for (const body of bodies) {
    if (body.type === 'run.completed') {
      const open = [...entry.interactions.values()].filter(
        (interaction) => interaction.runId === body.runId && isOpenInteraction(interaction.status),
      );
      result.push(...cancellations(open, reason));
      for (const [toolUseId, call] of entry.openToolCalls)
        if (call.runId === body.runId)
          result.push({
            type: 'run.tool_activity',
            runId: call.runId,
            status: 'failed',
            toolName: call.toolName,
            toolUseId,
            ...(call.parentToolUseId === undefined ? {} : { parentToolUseId: call.parentToolUseId }),
          });
    }
    result.push(body);
  }
  return result;
}

/** A command's events for one session, and what its decision changes on the record that the events do not carry. */
export interface SessionChange {
  readonly entry: SessionEntry;
  readonly bodies: readonly EventBody[];
  readonly amend?: (record: SessionRecord) => SessionRecord;
}

/**
 * Applies events to a session in memory (its record, active run and interactions, through the
 * pure evolve functions) and hands the change to the single writer.
 */
export class SessionLog {
  private readonly writer: EventWriter;

  constructor(writer: EventWriter) {
    this.writer = writer;
  }

  /** Evolves the session in memory; returns what to write. */
  apply(entry: SessionEntry, bodies: readonly EventBody[], at: string): Change {
    // Allocated only when something is added (a streamed delta changes neither).
    let runs: RunRecord[] | undefined;
    let interactions: InteractionRecord[] | undefined;
    const sessionId = entry.record.sessionId;
    for (const body of bodies) {
      if (body.type.startsWith('interaction.') && 'interactionRef' in body) {
        const current = entry.interactions.get(body.interactionRef);
        const next = evolveInteraction(current, sessionId, body, at);
        if (next && next !== current) {
          entry.interactions.set(body.interactionRef, next);
          interactions ??= [];
          interactions.push(next);
          if (!isOpenInteraction(next.status)) entry.clearTimer(body.interactionRef);
        }
      } else if ('runId' in body && body.runId !== undefined && body.type !== 'diagnostic') {
        const current = entry.activeRun?.runId === body.runId ? entry.activeRun : undefined;
        const next = evolveRun(current, sessionId, body, at);
        if (next && next !== current) {
          entry.activeRun = next.status === 'running' ? next : null;
          runs ??= [];
          runs.push(next);
        }
        if (body.type === 'run.tool_activity') entry.noteToolActivity(body);
        if (body.type === 'run.started' && body.control)
          entry.activeControl = { runId: body.runId, name: body.control.name };
        if (body.type === 'run.completed') {
          if (entry.activeControl?.runId === body.runId) entry.activeControl = null;
          for (const [toolUseId, call] of entry.openToolCalls)
            if (call.runId === body.runId) entry.openToolCalls.delete(toolUseId);
          entry.interruptRequested.delete(body.runId);
          entry.stoppedByShutdown.delete(body.runId);
        }
      }
      entry.record = evolveSession(entry.record, body, at);
    }
    // Records are never changed in place: a new copy only when the state moves (not once per delta).
    const state = sessionStateWith(entry.record, entry.openInteractionCount());
    if (state !== entry.record.state) entry.record = { ...entry.record, state };
    return {
      events: bodies.map((body) => ({ sessionId, body, at })),
      sessions: [entry.record],
      runs: runs ?? nothing,
      interactions: interactions ?? nothing,
    };
  }

  /**
   * Background output: applied now, written with the next batch. Dropped, unapplied, while the
   * session's earlier output could not be stored: its memory is being rebuilt from the store.
   */
  stage(entry: SessionEntry, bodies: readonly EventBody[], at = now()): void {
    if (this.writer.failureOf(entry.record.sessionId)) return;
    this.writer.stage(this.apply(entry, bodies, at));
  }

  /**
   * A streamed text or thinking delta: staged as `stage` would, without its general path (this runs
   * once per delta). A delta moves no run, interaction or state; only the session's last activity.
   */
  stageDelta(entry: SessionEntry, body: DeltaBody): void {
    const sessionId = entry.record.sessionId;
    if (this.writer.failureOf(sessionId)) return;
    const at = now();
    entry.record = evolveSession(entry.record, body, at);
    this.writer.stageDelta({ sessionId, body, at }, entry.record);
  }

  /**
   * Background output with a change of the record its events do not carry (e.g. a count read from
   * the workspace): amended, then applied and written with the next batch, like stage.
   */
  stageAmended(
    entry: SessionEntry,
    bodies: readonly EventBody[],
    amend: (record: SessionRecord) => SessionRecord,
    at: string = now(),
  ): void {
    if (this.writer.failureOf(entry.record.sessionId)) return;
    entry.record = amend(entry.record);
    this.writer.stage(this.apply(entry, bodies, at));
  }

  /**
   * The change that makes a session whose output was dropped consistent again (its memory already
   * rebuilt from the store): applied and written once; if the store refuses, memory goes back to
   * the stored state and the session stays failed.
   */
  async repair(entry: SessionEntry, bodies: readonly EventBody[]): Promise<ProtocolEvent[]> {
    const before = entry.snapshotState();
    const change = this.apply(entry, bodies, now());
    try {
      return await this.writer.repair(change);
    } catch (error) {
      entry.restoreState(before);
      throw error;
    }
  }

  /**
   * A command's effects: applied now and written with its receipt (and the blobs its events refer
   * to) in one transaction. If the store refuses, the in-memory session is restored and the
   * command fails with nothing written.
   */
  commit(
    entry: SessionEntry,
    bodies: readonly EventBody[],
    receipt: StoredReceipt,
    blobs: readonly BlobRecord[] = [],
  ): Promise<ProtocolEvent[]> {
    return this.commitTogether([{ entry, bodies }], receipt, blobs);
  }

  /**
   * One command's effects on several sessions (a fork and its source), applied and written as one
   * transaction: all of them are stored, or none and every session is restored.
   */
  async commitTogether(
    parts: readonly SessionChange[],
    receipt: StoredReceipt,
    blobs: readonly BlobRecord[] = [],
  ): Promise<ProtocolEvent[]> {
    for (const { entry } of parts) {
      const failure = this.writer.failureOf(entry.record.sessionId);
      if (failure) throw failure;
    }
    const before = parts.map(({ entry }) => ({ entry, state: entry.snapshotState(), rebuilds: entry.rebuilds }));
    const changes = parts.map(({ entry, bodies, amend }) => {
      const change = this.apply(entry, bodies, receipt.at);
      if (!amend) return change;
      entry.record = amend(entry.record);
      return { ...change, sessions: [entry.record] };
    });
    try {
      return await this.writer.commit(
        {
          events: changes.flatMap((change) => change.events),
          sessions: changes.flatMap((change) => change.sessions),
          runs: changes.flatMap((change) => change.runs),
          interactions: changes.flatMap((change) => change.interactions),
          blobs,
        },
        [receipt],
      );
    } catch (error) {
      // Memory rebuilt from the store meanwhile is newer than this command's copy.
      for (const { entry, state, rebuilds } of before) if (entry.rebuilds === rebuilds) entry.restoreState(state);
      throw error;
    }
  }
}
