import { describe, expect, it } from 'vitest';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { translateFrame } from './translate-frame.js';
import { stateWithTurn } from './translator.test-helper.js';
import type { TranslatorState } from './translator-state.js';

const state = stateWithTurn;

const stop = (reason: string | null, parent: string | null = null) =>
  parseCliFrame({
    type: 'stream_event',
    parent_tool_use_id: parent,
    event: { type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null } },
  });

function completed(current: TranslatorState, result: Record<string, unknown> = {}) {
  const parts = translateFrame(
    current,
    parseCliFrame({ type: 'result', subtype: 'success', is_error: false, session_id: 'conversation', ...result }),
  );
  return parts.find((part) => part.type === 'run.completed');
}

describe('run.completed stopReason', () => {
  it("is the model's last stop in the main conversation: a subagent's stop and a null one do not count", () => {
    const current = state();
    translateFrame(current, stop('tool_use'));
    translateFrame(current, stop('max_tokens', 'toolu_agent'));
    translateFrame(current, stop('end_turn'));
    translateFrame(current, stop(null));
    expect(completed(current, { stop_reason: 'stop_sequence' })).toMatchObject({ stopReason: 'end_turn' });
  });

  it('reads a stop the API names and the protocol does not as other', () => {
    const current = state();
    translateFrame(current, stop('model_context_window_exceeded'));
    expect(completed(current)).toMatchObject({ stopReason: 'other' });
  });

  it('comes from a message that did not stream, else from the result; absent when nobody says', () => {
    const nonStreamed = state();
    translateFrame(
      nonStreamed,
      parseCliFrame({
        type: 'assistant',
        parent_tool_use_id: null,
        message: { id: 'msg_1', stop_reason: 'pause_turn', content: [{ type: 'text', text: 'x' }] },
      }),
    );
    expect(completed(nonStreamed)).toMatchObject({ stopReason: 'pause_turn' });
    expect(completed(state(), { stop_reason: 'end_turn' })).toMatchObject({ stopReason: 'end_turn' });
    expect(completed(state(), { stop_reason: null })).not.toHaveProperty('stopReason');
  });

  it("ignores a synthetic API-error message's stop and the result that repeats it", () => {
    const current = state();
    translateFrame(
      current,
      parseCliFrame({
        type: 'assistant',
        parent_tool_use_id: null,
        error: 'server_error',
        is_api_error_message: true,
        message: { id: 'synthetic', stop_reason: 'stop_sequence', content: [{ type: 'text', text: 'API Error' }] },
      }),
    );
    const part = completed(current, { is_error: true, terminal_reason: 'api_error', stop_reason: 'stop_sequence' });
    expect(part).toMatchObject({ outcome: 'failed' });
    expect(part).not.toHaveProperty('stopReason');
  });

  it('is absent for an interrupted run and for a control', () => {
    const interrupted = state();
    interrupted.turn!.interruptRequested = true;
    translateFrame(interrupted, stop('tool_use'));
    const stopped = completed(interrupted, { stop_reason: 'tool_use' });
    expect(stopped).toMatchObject({ outcome: 'interrupted' });
    expect(stopped).not.toHaveProperty('stopReason');
    const control = state();
    control.turn = { ...control.turn!, control: 'cost' };
    translateFrame(
      control,
      parseCliFrame({
        type: 'assistant',
        parent_tool_use_id: null,
        message: { id: 'local', stop_reason: 'end_turn', content: [{ type: 'text', text: 'Total cost: $0' }] },
      }),
    );
    const controlPart = completed(control, { stop_reason: 'end_turn' });
    expect(controlPart).toMatchObject({ outcome: 'succeeded' });
    expect(controlPart).not.toHaveProperty('stopReason');
  });
});
