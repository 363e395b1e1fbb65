import type { EventOfType } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { promptEnding } from './stop-reason.js';

function completed(fields: Partial<EventOfType<'run.completed'>>): EventOfType<'run.completed'> {
  return {
    type: 'run.completed',
    sessionId: `ses_${'a'.repeat(32)}`,
    runId: `run_${'b'.repeat(32)}`,
    seq: 9,
    at: '2026-12-01T10:00:00.000Z',
    outcome: 'succeeded',
    ...fields,
  };
}

const crashed = {
  code: 'provider_crashed' as const,
  message: 'The claude CLI exited before finishing the turn (signal SIGKILL).',
  retryable: true,
  details: { signal: 'SIGKILL' },
};

describe('how a prompt ends', () => {
  it('a succeeded run ends the turn', () => {
    expect(promptEnding(completed({ stopReason: 'end_turn' }), false)).toEqual({ stopReason: 'end_turn' });
    expect(promptEnding(completed({}), false)).toEqual({ stopReason: 'end_turn' });
  });

  it("an answer cut at the output limit or refused (failed runs in Claude Code's classification) keeps ACP's stop reason", () => {
    const error = {
      code: 'provider_api_error' as const,
      message: 'cut',
      retryable: true,
      details: { reason: 'max_output_tokens' },
    };
    expect(promptEnding(completed({ outcome: 'failed', error, stopReason: 'max_tokens' }), false)).toEqual({
      stopReason: 'max_tokens',
    });
    expect(promptEnding(completed({ outcome: 'failed', error, stopReason: 'refusal' }), false)).toEqual({
      stopReason: 'refusal',
    });
  });

  it("a run the session's maxTurns stopped ends max_turn_requests; a spent cost budget stays an error", () => {
    const budget = (reason: string) => ({
      code: 'budget_exceeded' as const,
      message: 'limit',
      retryable: false,
      details: { reason },
    });
    expect(promptEnding(completed({ outcome: 'failed', error: budget('max_turns') }), false)).toEqual({
      stopReason: 'max_turn_requests',
    });
    expect(promptEnding(completed({ outcome: 'failed', error: budget('max_cost') }), false)).toEqual({
      error: budget('max_cost'),
    });
  });

  it('an interrupted run, or any run after the client cancelled, ends cancelled', () => {
    expect(promptEnding(completed({ outcome: 'interrupted' }), false)).toEqual({ stopReason: 'cancelled' });
    expect(promptEnding(completed({ outcome: 'failed', error: crashed }), true)).toEqual({ stopReason: 'cancelled' });
  });

  it('a failed run is an error with its code, never a quiet end', () => {
    expect(promptEnding(completed({ outcome: 'failed', error: crashed }), false)).toEqual({ error: crashed });
    expect(promptEnding(completed({ outcome: 'failed' }), false)).toMatchObject({ error: { code: 'internal_error' } });
  });

  it('a prompt queued behind another run that never started ends cancelled, or with the refusal', () => {
    const cancelled = (reason: EventOfType<'input.cancelled'>['reason']): EventOfType<'input.cancelled'> => ({
      type: 'input.cancelled',
      sessionId: `ses_${'a'.repeat(32)}`,
      runId: `run_${'b'.repeat(32)}`,
      inputId: `inp_${'c'.repeat(32)}`,
      seq: 9,
      at: '2026-12-01T10:00:00.000Z',
      reason,
      ...(reason === 'agent_refused' || reason === 'input_invalid' ? { error: crashed } : {}),
    });
    for (const reason of ['withdrawn', 'interrupted', 'session_closed', 'runtime_restarted'] as const)
      expect(promptEnding(cancelled(reason), false)).toEqual({ stopReason: 'cancelled' });
    expect(promptEnding(cancelled('agent_refused'), false)).toEqual({ error: crashed });
    expect(promptEnding(cancelled('input_invalid'), false)).toEqual({ error: crashed });
  });
});
