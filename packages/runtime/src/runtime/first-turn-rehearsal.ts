import { newSessionId, parseCommand } from '@tether/protocol';
import { fingerprintCommand } from './command-fingerprint.js';
import { refusedPartType } from './provider-part-check.js';

const sessionId = `ses_${'0'.repeat(32)}`;
const runId = `run_${'0'.repeat(32)}`;

/** A command of each kind a session's first turn takes: opened, a turn submitted, stopped. */
export const rehearsedCommands: readonly unknown[] = [
  { type: 'open_session', commandId: 'rehearsal-open', workspace: { kind: 'directory', path: '/' } },
  { type: 'submit_turn', commandId: 'rehearsal-submit', sessionId, input: [{ type: 'text', text: 'Hello.' }] },
  { type: 'interrupt_run', commandId: 'rehearsal-interrupt', sessionId, runId },
];

/** A part of each kind every turn's agent output is checked for: started, streamed, counted, ended (or stopped). */
export const rehearsedParts: readonly unknown[] = [
  { type: 'session.process_started', pid: 1, startTime: null, marker: 'rehearsal' },
  { type: 'run.message_delta', runId, blockId: 'block', text: 'Hello.' },
  {
    type: 'run.usage',
    runId,
    inputTokens: 1,
    outputTokens: 1,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    costUsd: null,
  },
  { type: 'run.completed', runId, outcome: 'succeeded', stopReason: 'end_turn' },
  { type: 'run.completed', runId, outcome: 'interrupted' },
];

let rehearsed = false;

/**
 * Runs the samples above through the command checks and the checks of an agent's output once, as
 * the runtime starts, and throws the results away: the first time a process runs them (zod's
 * schemas set up, V8 compiling and learning their code, Node loading Web Crypto for the ids) costs
 * a few milliseconds that a host's first session would otherwise pay before its agent is even
 * started, and its first stop before the stop reaches the agent (docs/decisions/2026-12-02-first-turn-code-run-at-start-up.md). Nothing is
 * stored or published. Never throws: it is a head start, nothing depends on it.
 */
export function rehearseFirstTurn(): void {
  // What it warms up belongs to the process: a second runtime in it has nothing left to learn.
  if (rehearsed) return;
  rehearsed = true;
  try {
    for (const command of rehearsedCommands) fingerprintCommand(parseCommand(command));
    for (const part of rehearsedParts) refusedPartType(part);
    // The ids' random source (Web Crypto) is loaded on its first use: 1-3 ms a first open paid.
    newSessionId();
  } catch {
    // Only a head start: the first real command is checked all the same.
  }
}
