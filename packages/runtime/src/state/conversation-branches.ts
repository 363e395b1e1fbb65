import {
  AgentError,
  type EventBody,
  type ForkSessionCommand,
  type RewindSessionCommand,
  checkpointStartsAnew,
} from '@tether/protocol';
import type { RunRecord, SessionRecord } from '../store/tether-store.js';
import type { Decision } from './session-machine.js';
import type { Decided, Refusal } from './refusal.js';
import { sessionClosed, sessionNotFound } from './session-machine.js';

/** Where a conversation is copied from: the agent's conversation, cut after a message (null: all of it). */
export type ConversationCopy = NonNullable<SessionRecord['copyConversation']>;

/** A fork's origin once its source is deleted: what its conversation was copied from is no longer known. */
export interface DeletedForkSource {
  readonly deletedSource: string;
}

/** fork_session: what the new session starts from, and the source's event. */
export interface ForkDecision extends Decision {
  /** What the fork's agent copies; null: the source has no conversation yet, the fork starts fresh. */
  readonly copyConversation: ConversationCopy | null;
  readonly forkedFrom: { readonly sessionId: string; readonly runId: string | null };
}

/** rewind_session: where the conversation continues from, and what file rewind to ask for. */
export interface RewindDecision extends Decision {
  /** Null: no earlier turn left anything to copy, so the conversation starts anew. */
  readonly copyConversation: ConversationCopy | null;
  /** The agent's id of toRunId's input message, when files are to be put back. */
  readonly fileRewindMessageId: string | null;
}

function refusal(code: 'run_active' | 'run_not_found', message: string): Refusal {
  return { refusal: new AgentError({ code, message }) };
}

function checkpointUnavailable(
  reason: 'no_checkpoint' | 'file_checkpointing_off' | 'compacted' | 'fork_source_deleted',
  message: string,
): Refusal {
  return { refusal: new AgentError({ code: 'checkpoint_unavailable', message, details: { reason } }) };
}

function ephemeralRefusal(what: string): Refusal {
  return {
    refusal: new AgentError({
      code: 'invalid_command',
      message: `An ephemeral session keeps no conversation to ${what}. Open a session without ephemeral to branch it.`,
      details: { reason: 'ephemeral_session' },
    }),
  };
}

const runActive = (then: string) =>
  refusal(
    'run_active',
    `The session has an active run. Wait for its run.completed event (or interrupt it), then ${then}.`,
  );

function completedRun(runs: readonly RunRecord[], runId: string, then: string): RunRecord | Refusal {
  const run = runs.find((candidate) => candidate.runId === runId);
  if (!run)
    return refusal('run_not_found', 'The session has no run with that id. Use a runId from its run.started events.');
  if (run.status !== 'completed') return runActive(then);
  return run;
}

/**
 * A fork of `state`: at `atRunId` (its checkpoint after that turn), or of the whole conversation as
 * it stands (no active run then). The source may be closed; it is not changed, only told.
 */
export function decideFork(
  state: SessionRecord | undefined,
  command: ForkSessionCommand,
  context: {
    readonly runs: readonly RunRecord[];
    readonly forkSessionId: string;
    /** The runs whose conversation was compacted (context.compacted). */
    readonly compacted: ReadonlySet<string>;
  },
): Decided<ForkDecision> {
  if (!state) return sessionNotFound();
  if (state.ephemeral) return ephemeralRefusal('copy');
  const atRunId = command.atRunId ?? null;
  let copyConversation: ConversationCopy | null;
  if (atRunId !== null) {
    const run = completedRun(context.runs, atRunId, 'fork at it');
    if ('refusal' in run) return run;
    const checkpoint = run.checkpoint;
    if (checkpoint !== null && checkpointStartsAnew(checkpoint)) {
      copyConversation = null;
    } else if (checkpoint?.lastMessageId == null) {
      return checkpointUnavailable(
        'no_checkpoint',
        'The agent kept no point to copy the conversation at after that run (it answered nothing, or ended before saying where it stood). Fork at another run, or without atRunId.',
      );
    } else {
      copyConversation = { providerSessionId: checkpoint.providerSessionId, afterMessageId: checkpoint.lastMessageId };
      const compaction = compactionAfter(context.runs, context.compacted, run, copyConversation, false);
      if (compaction !== null) {
        return checkpointUnavailable(
          'compacted',
          `The conversation was compacted after that run (in run ${compaction}): the agent keeps only its summary of what came before, so it cannot continue from there. Fork at that run or a later one, or without atRunId.`,
        );
      }
    }
  } else {
    if (state.activeRunId !== null) return runActive('fork (or fork at a completed run with atRunId)');
    copyConversation = state.copyConversation ?? conversationAsItStands(state, context.runs);
  }
  const events: EventBody[] = [{ type: 'session.forked', forkSessionId: context.forkSessionId, atRunId }];
  return { events, copyConversation, forkedFrom: { sessionId: state.sessionId, runId: atRunId } };
}

/**
 * The session's whole conversation, cut where it stands: the source may go on before the fork's
 * agent starts, and what it adds then is not the fork's. The cut is after the latest run that left a
 * point in this conversation: its last message, or its input when it ended before any answer
 * (stopped or failed; Claude Code resumes at a user message too). Later runs that ended without a
 * point and without succeeding (stopped before the agent took their input) added nothing, and are
 * passed over. A point after which the conversation started anew (/clear) leaves nothing to copy.
 * Without such a point, all of it, as the agent has it then: a run that succeeded without one (a
 * control that adds nothing to cut after), or a point in another conversation (a copy's source).
 */
function conversationAsItStands(state: SessionRecord, runs: readonly RunRecord[]): ConversationCopy | null {
  const providerSessionId = state.providerSessionId;
  if (providerSessionId === null) return null;
  // listRuns gives them oldest first.
  for (const run of [...runs].reverse()) {
    const checkpoint = run.checkpoint;
    if (checkpoint === null) {
      if (run.outcome === 'succeeded') break;
      continue;
    }
    if (checkpoint.providerSessionId !== providerSessionId) break;
    if (checkpointStartsAnew(checkpoint)) return null;
    return { providerSessionId, afterMessageId: checkpoint.lastMessageId ?? checkpoint.inputMessageId };
  }
  return { providerSessionId, afterMessageId: null };
}

/** The runs the conversation held where `stop` first matches the log, oldest first (all of the log: at its end). */
function liveRuns(events: Iterable<EventBody>, stop: (event: EventBody) => boolean): string[] {
  const live: string[] = [];
  for (const event of events) {
    if (stop(event)) return live;
    if (event.type === 'run.started') {
      live.push(event.runId);
    } else if (event.type === 'session.rewound') {
      const cut = live.indexOf(event.toRunId);
      if (cut >= 0) live.splice(cut);
    }
  }
  return live;
}

/**
 * The runs the conversation held when `runId` started, oldest first: every earlier run, less those
 * a rewind took out before then. Reads the session's run.started and session.rewound events in log order.
 */
export function runsContinuedBy(events: Iterable<EventBody>, runId: string): string[] {
  return liveRuns(events, (event) => event.type === 'run.started' && event.runId === runId);
}

/** The runs the conversation holds now, oldest first: every run, less those a rewind took out. */
export function runsInConversation(events: Iterable<EventBody>): string[] {
  return liveRuns(events, () => false);
}

/** The runs a source's conversation held when `forkSessionId` was forked from it (its session.forked), oldest first. */
export function runsBeforeFork(events: Iterable<EventBody>, forkSessionId: string): string[] {
  return liveRuns(events, (event) => event.type === 'session.forked' && event.forkSessionId === forkSessionId);
}

/** Where the last of `live` that the agent kept a point after left the conversation: a copy cut there, or nothing to copy (it started anew). */
export interface ConversationCut {
  readonly copy: ConversationCopy | null;
}

/** The conversation cut after the last of `live` (oldest first) that the agent kept a point for; null: none did. */
export function cutAfterLastCheckpoint(live: readonly string[], runs: readonly RunRecord[]): ConversationCut | null {
  const byId = new Map(runs.map((run) => [run.runId, run]));
  for (const runId of [...live].reverse()) {
    const checkpoint = byId.get(runId)?.checkpoint;
    if (!checkpoint) continue;
    if (checkpointStartsAnew(checkpoint)) return { copy: null };
    if (checkpoint.lastMessageId !== null) {
      return { copy: { providerSessionId: checkpoint.providerSessionId, afterMessageId: checkpoint.lastMessageId } };
    }
  }
  return null;
}

/**
 * A turn the model answered in full: it stands in the agent's conversation, checkpoint or not (runs
 * stored before Tether kept checkpoints have none). A local command (/cost) calls no model, and adds
 * nothing to the conversation a cut could lose.
 */
export function answeredByTheModel(run: RunRecord): boolean {
  return run.outcome === 'succeeded' && (run.usage?.outputTokens ?? 0) > 0;
}

/**
 * A turn answered by the model after the last checkpoint of `live` (or with none before it), which a
 * cut there would drop. Null when the cut keeps every such turn (those after the checkpoint failed,
 * were stopped before saying where they stood, or ran no model). Controls never record a checkpoint
 * (a slash command that calls the model, /review or /init, included): a cut is made past them as ever.
 */
function answeredAfterLastCheckpoint(
  live: readonly string[],
  runs: readonly RunRecord[],
  controls: ReadonlySet<string>,
): string | null {
  const byId = new Map(runs.map((run) => [run.runId, run]));
  for (const runId of [...live].reverse()) {
    const run = byId.get(runId);
    if (run?.checkpoint) return null;
    if (run && !controls.has(runId) && answeredByTheModel(run)) return runId;
  }
  return null;
}

/**
 * Whether the agent asked to put `run`'s files back may hold its file checkpoint. A running agent is
 * asked (one started from a copy still holds every turn of the conversation it copied, cut or not).
 * With none running, the one started to ask resumes the conversation: it holds the turns the
 * conversation holds now and, when it starts from a pending copy, every turn of the conversation
 * copied. A turn a rewind took out of both is refused without starting an agent just to be told so
 * (the agent answers that it has no checkpoint; ../shared/claude-cli-protocol-wave2.md, sections 4-5).
 */
function startedAgentMayHold(state: SessionRecord, run: RunRecord, conversation: readonly string[]): boolean {
  if (state.liveProcess !== null || conversation.includes(run.runId)) return true;
  const copy = state.copyConversation;
  return copy != null && run.checkpoint?.providerSessionId === copy.providerSessionId;
}

/** A run after `target` that the conversation still holds started it anew (/clear): its agent keeps none of the old one's file checkpoints. */
function clearedSince(
  target: RunRecord,
  context: { readonly runs: readonly RunRecord[]; readonly conversation: readonly string[] },
): boolean {
  const at = context.conversation.indexOf(target.runId);
  if (at < 0) return false;
  const byId = new Map(context.runs.map((run) => [run.runId, run]));
  return context.conversation.slice(at + 1).some((runId) => {
    const checkpoint = byId.get(runId)?.checkpoint;
    return checkpoint != null && checkpointStartsAnew(checkpoint);
  });
}

/**
 * The first run from `target` on (`target` itself too when `including`), in log order, whose compaction
 * lies in the transcript `copy` is cut in; null when none. Claude Code reads a transcript from its
 * last compaction on, so a conversation cut before one cannot be resumed (resume_not_found at the
 * next turn), whichever branch the compaction was in.
 */
function compactionAfter(
  runs: readonly RunRecord[],
  compacted: ReadonlySet<string>,
  target: RunRecord,
  copy: ConversationCopy | null,
  including: boolean,
): string | null {
  if (copy === null) return null;
  const from = runs.indexOf(target) + (including ? 0 : 1);
  const found = runs
    .slice(from)
    .find((run) => compacted.has(run.runId) && run.checkpoint?.providerSessionId === copy.providerSessionId);
  return found?.runId ?? null;
}

/**
 * A rewind to just before `toRunId`: the conversation continues as a copy cut after the last turn
 * before it that the agent kept a point for (of the turns `toRunId` itself continued), else from
 * what a fork was copied from, or anew.
 */
export function decideRewind(
  state: SessionRecord | undefined,
  command: RewindSessionCommand,
  context: {
    readonly runs: readonly RunRecord[];
    readonly continued: readonly string[];
    /** For a fork: the conversation it was copied from (what its first turn continued), unless its source was deleted; null otherwise. */
    readonly origin: ConversationCopy | DeletedForkSource | null;
    /** The runs the conversation holds now (runsInConversation). */
    readonly conversation: readonly string[];
    /** The runs whose conversation was compacted (context.compacted). */
    readonly compacted: ReadonlySet<string>;
    /** The runs that were controls (slash commands): they record no checkpoint, whoever stored them. */
    readonly controls: ReadonlySet<string>;
  },
): Decided<RewindDecision> {
  if (!state) return sessionNotFound();
  if (state.state === 'closed') return sessionClosed(' set to its id, then rewind it.');
  if (state.ephemeral) return ephemeralRefusal('rewind');
  if (state.activeRunId !== null) return runActive('rewind');
  const target = completedRun(context.runs, command.toRunId, 'rewind');
  if ('refusal' in target) return target;
  let fileRewindMessageId: string | null = null;
  if (command.files) {
    if (state.configuration.fileCheckpointing === false) {
      return checkpointUnavailable(
        'file_checkpointing_off',
        'The session was opened with fileCheckpointing off, so the agent kept no copies of the files. Rewind without files.',
      );
    }
    fileRewindMessageId = target.checkpoint?.inputMessageId ?? null;
    if (target.checkpoint && fileRewindMessageId === null) {
      return checkpointUnavailable(
        'no_checkpoint',
        'That run took no input of yours (the agent began it by itself, or it started a new conversation), and the agent keeps file checkpoints only under your inputs. Rewind without files, or to another run.',
      );
    }
    if (fileRewindMessageId === null) {
      return checkpointUnavailable(
        'no_checkpoint',
        'The agent kept no file checkpoint for that run (it ended before saying where it stood). Rewind without files, or to another run.',
      );
    }
    if (clearedSince(target, context)) {
      return checkpointUnavailable(
        'no_checkpoint',
        'The conversation was cleared (/clear) after that run, and the agent keeps no file checkpoints from before a clear. Rewind without files, or to a run after the clear.',
      );
    }
    if (!startedAgentMayHold(state, target, context.conversation)) {
      return checkpointUnavailable(
        'no_checkpoint',
        'The agent cannot put the files back for that run: a rewind took it out of the conversation, and the agent that resumes the conversation keeps no file checkpoint of it. Rewind without files, or to another run.',
      );
    }
  }
  const unrecorded = answeredAfterLastCheckpoint(context.continued, context.runs, context.controls);
  if (unrecorded !== null)
    return checkpointUnavailable(
      'no_checkpoint',
      `Run ${unrecorded}, before that run, was recorded without a checkpoint (by a Tether from before they were kept), so the conversation cannot be cut after it without dropping it. Rewind to a later run, or clear the conversation (the clear control) to start anew.`,
    );
  // Before a fork's own turns with a point lies the conversation it was copied from, not nothing.
  const cut = cutAfterLastCheckpoint(context.continued, context.runs);
  let copyConversation = cut ? cut.copy : null;
  if (!cut && context.origin !== null) {
    // Starting anew would drop, unasked, the conversation the fork was made to continue.
    if ('deletedSource' in context.origin)
      return checkpointUnavailable(
        'fork_source_deleted',
        `This session was forked from session ${context.origin.deletedSource}, which was deleted since, so the conversation it was copied from is no longer known and it cannot go back to before its first turn. Rewind to a later run, or clear the conversation (the clear control) to start anew.`,
      );
    copyConversation = context.origin;
  }
  const compaction = compactionAfter(context.runs, context.compacted, target, copyConversation, true);
  if (compaction !== null) {
    return checkpointUnavailable(
      'compacted',
      `The conversation was compacted ${compaction === target.runId ? 'in that run' : `after that run (in run ${compaction})`}: the agent keeps only its summary of what came before, so it cannot continue from before it. Rewind to a run after the compaction, or fork at one (fork_session with atRunId).`,
    );
  }
  return {
    events: [{ type: 'session.rewound', toRunId: command.toRunId, files: null }],
    copyConversation,
    fileRewindMessageId,
  };
}

/**
 * The session after a rewind was recorded: its next agent starts from the copy, or from nothing
 * (no conversation to resume). session.rewound does not carry the cut point, so this is applied
 * with it, from the rewind's decision.
 */
export function continueFrom(state: SessionRecord, copyConversation: ConversationCopy | null): SessionRecord {
  return {
    ...state,
    copyConversation,
    providerSessionId: copyConversation === null ? null : state.providerSessionId,
  };
}
