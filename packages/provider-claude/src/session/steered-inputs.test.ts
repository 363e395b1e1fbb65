import { describe, expect, it } from 'vitest';
import { userMessage } from '../connection/user-message.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import { SteeredInputs } from './steered-inputs.js';

function lifecycle(uuid: string, state: string): CliFrame {
  return { kind: 'command_lifecycle', frame: { type: 'command_lifecycle', command_uuid: uuid, state } };
}

function result(uuids: string[], subtype = 'success'): CliFrame {
  return { kind: 'result', frame: { type: 'result', subtype, user_message_uuids: uuids } };
}

const messageStart = {
  kind: 'stream_event',
  frame: { type: 'stream_event', event: { type: 'message_start' } },
} as unknown as CliFrame;

function line(uuid: string) {
  return { ...userMessage([{ type: 'text', text: `about ${uuid}` }], uuid), priority: 'next' as const };
}

function inputs(): SteeredInputs {
  const steered = new SteeredInputs();
  steered.add({ inputId: 'inp_a', runId: 'run-1', uuid: 'u-a', message: line('u-a') });
  steered.add({ inputId: 'inp_b', runId: 'run-1', uuid: 'u-b', message: line('u-b') });
  return steered;
}

describe('SteeredInputs', () => {
  it('folds an input the CLI started once the model answers the request carrying it, once; ignores its queued lifecycle', () => {
    const steered = inputs();
    expect(steered.onFrame(lifecycle('u-a', 'queued'), false)).toEqual([]);
    expect(steered.onFrame(lifecycle('u-a', 'started'), false)).toEqual([]);
    expect(steered.onFrame(messageStart, false)).toEqual([{ type: 'input.folded', runId: 'run-1', inputId: 'inp_a' }]);
    expect(steered.onFrame(lifecycle('u-a', 'completed'), false)).toEqual([]);
    expect(steered.oldestPending('run-1')).toBe('u-b');
  });

  it('does not fold one the spent budget stopped before its request went out, though the result names it', () => {
    const steered = inputs();
    expect(steered.onFrame(lifecycle('u-a', 'started'), false)).toEqual([]);
    expect(steered.onFrame(result(['u-a'], 'error_max_budget_usd'), false)).toEqual([]);
    expect(steered.onFrame(lifecycle('u-a', 'cancelled'), false)).toMatchObject([
      { type: 'input.cancelled', inputId: 'inp_a', reason: 'agent_refused' },
    ]);
  });

  it('folds an input a result lists among the inputs it answered, when no lifecycle said so', () => {
    const steered = inputs();
    expect(steered.onFrame(result(['u-turn', 'u-b']), false)).toEqual([
      { type: 'input.folded', runId: 'run-1', inputId: 'inp_b' },
    ]);
  });

  it('names why the CLI cancelled one: withdrawn, interrupted, else refused with an error', () => {
    const steered = inputs();
    steered.add({ inputId: 'inp_c', runId: 'run-1', uuid: 'u-c', message: line('u-c') });
    steered.markWithdrawing('u-a');
    expect(steered.onFrame(lifecycle('u-a', 'cancelled'), true)).toMatchObject([{ reason: 'withdrawn' }]);
    expect(steered.onFrame(lifecycle('u-b', 'cancelled'), true)).toMatchObject([{ reason: 'interrupted' }]);
    expect(steered.onFrame(lifecycle('u-c', 'cancelled'), false)).toMatchObject([
      { type: 'input.cancelled', inputId: 'inp_c', reason: 'agent_refused', error: { code: 'provider_rejected' } },
    ]);
    expect(steered.oldestPending('run-1')).toBeUndefined();
  });

  it('a withdrawal the CLI answered ends the input once, whichever of answer and lifecycle comes first', () => {
    const steered = inputs();
    steered.markWithdrawing('u-a');
    expect(steered.withdrawn('u-a', true)).toMatchObject({ type: 'input.cancelled', reason: 'withdrawn' });
    expect(steered.onFrame(lifecycle('u-a', 'cancelled'), false)).toEqual([]);
    steered.markWithdrawing('u-b');
    expect(steered.onFrame(lifecycle('u-b', 'cancelled'), false)).toMatchObject([{ reason: 'withdrawn' }]);
    expect(steered.withdrawn('u-b', true)).toBeNull();
  });

  it("ends the run's pending inputs with the run: interrupted, or refused with the run's error", () => {
    const interrupted = inputs();
    expect(interrupted.endRun('run-1', 'interrupted', undefined).map((part) => part.reason)).toEqual([
      'interrupted',
      'interrupted',
    ]);
    const failed = inputs();
    const error = { code: 'provider_crashed' as const, message: 'gone', retryable: true };
    expect(failed.endRun('run-1', 'failed', error)).toMatchObject([{ error }, { error }]);
    expect(failed.endRun('run-1', 'failed', error)).toEqual([]);
    expect(inputs().endRun('run-2', 'failed', error)).toEqual([]);
  });

  it("finds an input by its Tether id, and the run's lines to write again, until it ended", () => {
    const steered = inputs();
    expect(steered.pendingMessages('run-1').map((message) => message.uuid)).toEqual(['u-a', 'u-b']);
    expect(steered.pendingMessages('run-2')).toEqual([]);
    expect(steered.uuidOf('inp_b')).toBe('u-b');
    steered.onFrame(lifecycle('u-b', 'completed'), false);
    expect(steered.uuidOf('inp_b')).toBeUndefined();
    expect(steered.pendingMessages('run-1').map((message) => message.priority)).toEqual(['next']);
  });
});
