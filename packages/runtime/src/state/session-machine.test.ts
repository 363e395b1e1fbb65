import type { EventBody, SubmitTurnCommand } from '@tether/protocol';
import { sampleSessionRecord, sampleWorktreeStatus } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../store/tether-store.js';
import { isRefusal } from './refusal.js';
import {
  acceptsProviderPart,
  decideClose,
  decideInterrupt,
  decideOnOpenSession,
  decideReopen,
  decideRunControl,
  decideSubmitTurn,
  evolveRun,
  evolveSession,
} from './session-machine.js';

const at = '2026-11-29T00:00:00.000Z';
const idle: SessionRecord = sampleSessionRecord();
const runId = `run_${'b'.repeat(32)}`;
const context = { newRunId: () => runId };
const turnContext = { ...context, input: [{ type: 'text' as const, text: 'hi' }] };
const submit: SubmitTurnCommand = {
  type: 'submit_turn',
  commandId: 'c',
  sessionId: idle.sessionId,
  input: [{ type: 'text', text: 'hi' }],
};

/** given a history of events, the state they lead to */
function given(...events: EventBody[]): SessionRecord {
  return events.reduce((state, event) => evolveSession(state, event, at), idle);
}

describe('session state machine (pure decide / evolve)', () => {
  it('given an idle session, submit_turn decides run.started and evolves to running', () => {
    const decision = decideSubmitTurn(given(), submit, turnContext);
    if (isRefusal(decision)) throw decision.refusal;
    expect(decision.runId).toBe(runId);
    expect(decision.events).toEqual([
      { type: 'run.started', runId, input: [{ type: 'text', text: 'hi' }], inputRedacted: false },
    ]);
    expect(given(...decision.events)).toMatchObject({ state: 'running', activeRunId: runId });
  });

  it('given a running session, submit_turn is refused with run_active', () => {
    const running = given({ type: 'run.started', runId, input: null, inputRedacted: true });
    expect(decideSubmitTurn(running, submit, turnContext)).toMatchObject({ refusal: { code: 'run_active' } });
  });

  it('given a running session, a follow-up is queued as the next run (after_turn) or into the running run (steer)', () => {
    const running = given({ type: 'run.started', runId, input: null, inputRedacted: true });
    const nextRunId = `run_${'c'.repeat(32)}`;
    const inputId = `inp_${'d'.repeat(32)}`;
    const followUp = { newRunId: () => nextRunId, newInputId: () => inputId, input: turnContext.input };
    const queued = decideSubmitTurn(running, { ...submit, delivery: 'after_turn' }, followUp);
    expect(queued).toMatchObject({
      runId: nextRunId,
      queued: { inputId, delivery: 'after_turn' },
      events: [{ type: 'input.queued', inputId, delivery: 'after_turn', runId: nextRunId, inputRedacted: false }],
    });
    const steered = decideSubmitTurn(running, { ...submit, delivery: 'steer' }, followUp);
    expect(steered).toMatchObject({ runId, queued: { delivery: 'steer' }, events: [{ runId, delivery: 'steer' }] });

    // Idle again with the follow-up still queued: it starts first, a plain turn or a steer waits.
    if (isRefusal(queued)) throw queued.refusal;
    const waiting = given({ type: 'run.started', runId, input: null, inputRedacted: true }, ...queued.events, {
      type: 'run.completed',
      runId,
      outcome: 'succeeded',
    });
    expect(decideSubmitTurn(waiting, submit, turnContext)).toMatchObject({ refusal: { code: 'run_active' } });
    expect(decideSubmitTurn(waiting, { ...submit, delivery: 'steer' }, followUp)).toMatchObject({
      refusal: { code: 'run_active' },
    });
    expect(decideSubmitTurn(waiting, { ...submit, delivery: 'after_turn' }, followUp)).toMatchObject({
      events: [{ type: 'input.queued' }],
    });
  });

  it('refuses a turn with budget_exceeded once the recorded cost reached maxCostUsd', () => {
    const spent = sampleSessionRecord({
      configuration: { maxCostUsd: 0.5 },
      usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: 0.5 },
    });
    const refused = decideSubmitTurn(spent, submit, turnContext);
    expect(refused).toMatchObject({ refusal: { code: 'budget_exceeded', details: { reason: 'max_cost' } } });
    // It suggests only what can be done: a reopened session keeps its settings, no command raises a budget.
    const { message } = (refused as { refusal: { message: string } }).refusal;
    expect(message).toContain(
      'To go on, fork it (fork_session: its conversation continues in a new session with a budget of its own), or open a new session.',
    );
    expect(message).not.toMatch(/continue this one|larger maxCostUsd/);
    const left = { ...spent, usage: { ...spent.usage, costUsd: 0.49 } };
    expect(decideSubmitTurn(left, submit, turnContext)).toMatchObject({ runId });
    expect(decideSubmitTurn({ ...spent, usage: { ...spent.usage, costUsd: null } }, submit, turnContext)).toMatchObject(
      {
        runId,
      },
    );
  });

  it('given a closed session, submit_turn is refused with session_closed and reopen decides session.opened', () => {
    const closed = given({ type: 'session.closed', reason: 'requested' });
    expect(decideSubmitTurn(closed, submit, turnContext)).toMatchObject({ refusal: { code: 'session_closed' } });
    const reopened = decideReopen(closed, { type: 'open_session', commandId: 'c', continueSession: idle.sessionId });
    expect(reopened).toMatchObject({ events: [{ type: 'session.opened', reopened: true }] });
    expect(decideReopen(given(), { type: 'open_session', commandId: 'c', continueSession: idle.sessionId })).toEqual({
      events: [],
    });
  });

  it('a missing session is refused, not thrown: session_not_found from every decider', () => {
    const refused = { refusal: { code: 'session_not_found' } };
    expect(decideSubmitTurn(undefined, submit, turnContext)).toMatchObject(refused);
    expect(
      decideRunControl(
        undefined,
        { type: 'run_control', commandId: 'c', sessionId: idle.sessionId, name: 'compact' },
        context,
      ),
    ).toMatchObject(refused);
    expect(
      decideReopen(undefined, { type: 'open_session', commandId: 'c', continueSession: idle.sessionId }),
    ).toMatchObject(refused);
    expect(
      decideInterrupt(undefined, { type: 'interrupt_run', commandId: 'c', sessionId: idle.sessionId }),
    ).toMatchObject(refused);
    expect(decideClose(undefined, { type: 'close_session', commandId: 'c', sessionId: idle.sessionId })).toMatchObject(
      refused,
    );
    expect(decideOnOpenSession(undefined, ' first.')).toMatchObject(refused);
    expect(decideOnOpenSession(given({ type: 'session.closed', reason: 'requested' }), ' first.')).toMatchObject({
      refusal: { code: 'session_closed', message: expect.stringContaining('continueSession first.') },
    });
    expect(decideOnOpenSession(given(), ' first.')).toEqual({ events: [] });
  });

  it('interrupt applies to the active run only', () => {
    const running = given({ type: 'run.started', runId, input: null, inputRedacted: true });
    expect(decideInterrupt(running, { type: 'interrupt_run', commandId: 'c', sessionId: idle.sessionId })).toEqual({
      events: [],
      runId,
    });
    expect(
      decideInterrupt(running, {
        type: 'interrupt_run',
        commandId: 'c',
        sessionId: idle.sessionId,
        runId: `run_${'c'.repeat(32)}`,
      }),
    ).toEqual({ events: [], runId: null });
    expect(decideInterrupt(given(), { type: 'interrupt_run', commandId: 'c', sessionId: idle.sessionId })).toEqual({
      events: [],
      runId: null,
    });
  });

  it('closing a running session completes its run as interrupted first', () => {
    const running = given({ type: 'run.started', runId, input: null, inputRedacted: true });
    const decision = decideClose(running, { type: 'close_session', commandId: 'c', sessionId: idle.sessionId });
    if (isRefusal(decision)) throw decision.refusal;
    expect(decision.events.map((event) => event.type)).toEqual(['run.completed', 'session.closed']);
    expect(
      given(...[{ type: 'run.started', runId, input: null, inputRedacted: true } as EventBody, ...decision.events]),
    ).toMatchObject({ state: 'closed', activeRunId: null });
  });

  it('accumulates usage per session and per run', () => {
    const usage: EventBody = {
      type: 'run.usage',
      runId,
      inputTokens: 10,
      outputTokens: 2,
      cacheReadTokens: 1,
      cacheCreationTokens: 0,
      costUsd: 0.5,
    };
    const state = given({ type: 'run.started', runId, input: null, inputRedacted: true }, usage, usage);
    expect(state.usage).toEqual({
      inputTokens: 20,
      outputTokens: 4,
      cacheReadTokens: 2,
      cacheCreationTokens: 0,
      costUsd: 1,
    });
    const run = [usage, { type: 'run.completed', runId, outcome: 'succeeded' } as EventBody].reduce(
      (current, event) => evolveRun(current, idle.sessionId, event, at),
      evolveRun(undefined, idle.sessionId, { type: 'run.started', runId, input: null, inputRedacted: true }, at),
    );
    expect(run).toMatchObject({ status: 'completed', outcome: 'succeeded', usage: { inputTokens: 10, costUsd: 0.5 } });
  });

  it('records the workspace status session.workspace_ready and session.workspace_released carry', () => {
    const ready = sampleWorktreeStatus();
    const kept = sampleWorktreeStatus({ state: 'kept', keptBecause: 'commits_beyond_base' });
    expect(given({ type: 'session.workspace_ready', workspace: ready }).workspaceStatus).toEqual(ready);
    expect(
      given(
        { type: 'session.workspace_ready', workspace: ready },
        { type: 'session.workspace_released', workspace: kept },
      ).workspaceStatus,
    ).toEqual(kept);
    const later = '2026-11-29T00:00:01.000Z';
    const changed = evolveSession(
      given({ type: 'session.workspace_ready', workspace: ready }),
      { type: 'run.files_changed', runId, files: [], truncated: false },
      later,
    );
    expect(changed).toMatchObject({ workspaceStatus: ready, updatedAt: later });
  });

  it('accepts provider parts only for the active run', () => {
    const running = given({ type: 'run.started', runId, input: null, inputRedacted: true });
    expect(acceptsProviderPart(running, { type: 'run.message_delta', runId, blockId: 'b', text: 'x' })).toBe(true);
    expect(
      acceptsProviderPart(running, {
        type: 'run.message_delta',
        runId: `run_${'c'.repeat(32)}`,
        blockId: 'b',
        text: 'x',
      }),
    ).toBe(false);
    expect(acceptsProviderPart(given(), { type: 'run.completed', runId, outcome: 'succeeded' })).toBe(false);
    expect(acceptsProviderPart(given(), { type: 'diagnostic', level: 'debug', code: 'x' })).toBe(true);
  });
});
