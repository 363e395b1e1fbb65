import { toolActivityLimits } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { describe, expect, it } from 'vitest';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { translateFrame } from './translate-frame.js';
import { stateWithTurn } from './translator.test-helper.js';
import type { TranslatorState } from './translator-state.js';

const state = (toolInputDetail: 'full' | 'none' = 'full') => stateWithTurn({ toolInputDetail });

function invoked(current: TranslatorState, input: unknown): AgentProviderV1Part[] {
  return translateFrame(
    current,
    parseCliFrame({
      type: 'assistant',
      parent_tool_use_id: null,
      message: { id: 'msg_1', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input }] },
    }),
  );
}

function returned(current: TranslatorState, content: unknown, isError = false): AgentProviderV1Part[] {
  return translateFrame(
    current,
    parseCliFrame({
      type: 'user',
      parent_tool_use_id: null,
      message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: isError, content }] },
    }),
  );
}

describe("a tool call's input on run.tool_activity (invoked)", () => {
  it('is carried as given up to the byte limit, and only marked omitted beyond it', () => {
    const current = state();
    const fits = { file_path: '/w/a.txt', content: 'x'.repeat(toolActivityLimits.inputBytes - 100) };
    expect(invoked(current, fits)).toEqual([
      {
        type: 'run.tool_activity',
        runId: 'run_1',
        status: 'invoked',
        toolName: 'Write',
        toolUseId: 'toolu_1',
        input: fits,
      },
    ]);
    // Multi-byte text counts in bytes, not characters.
    const tooBig = { file_path: '/w/a.txt', content: 'é'.repeat(toolActivityLimits.inputBytes / 2) };
    const [part] = invoked(current, tooBig);
    expect(part).toMatchObject({ status: 'invoked', inputOmitted: true });
    expect(part).not.toHaveProperty('input');
  });

  it('says nothing when the block has no object input (the frame is still read)', () => {
    for (const input of [undefined, 'a string', ['a', 'list'], null]) {
      const [part] = invoked(state(), input);
      expect(part).toEqual({
        type: 'run.tool_activity',
        runId: 'run_1',
        status: 'invoked',
        toolName: 'Write',
        toolUseId: 'toolu_1',
      });
    }
  });
});

describe("a tool result's text on run.tool_activity (succeeded / failed)", () => {
  it('is a string content as it is, or the text blocks of an array content joined; images are not text', () => {
    const current = state();
    invoked(current, {});
    expect(returned(current, 'done')).toMatchObject([{ status: 'succeeded', output: 'done' }]);
    const mixed = [
      { type: 'text', text: 'first' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'text', text: 'second' },
    ];
    expect(returned(current, mixed, true)).toMatchObject([{ status: 'failed', output: 'first\nsecond' }]);
    const [imageOnly] = returned(current, [{ type: 'image', source: { type: 'base64', data: 'AAAA' } }]);
    expect(imageOnly).toMatchObject({ status: 'succeeded', toolName: 'Write' });
    expect(imageOnly).not.toHaveProperty('output');
    const [noContent] = returned(current, undefined);
    expect(noContent).not.toHaveProperty('output');
  });

  it('is cut at the character limit, marked truncated, never inside a surrogate pair', () => {
    const current = state();
    const limit = toolActivityLimits.outputCharacters;
    const [exact] = returned(current, 'y'.repeat(limit));
    expect(exact).toMatchObject({ output: 'y'.repeat(limit) });
    expect(exact).not.toHaveProperty('outputTruncated');
    const [long] = returned(current, 'z'.repeat(limit + 5));
    expect(long).toMatchObject({ output: 'z'.repeat(limit), outputTruncated: true });
    // A pair straddling the limit is left out whole.
    const [pair] = returned(current, `${'a'.repeat(limit - 1)}😀tail`);
    expect(pair).toMatchObject({ output: 'a'.repeat(limit - 1), outputTruncated: true });
  });
});

describe('toolInputDetail none', () => {
  it("keeps both the tool's input and its result's text out of run.tool_activity", () => {
    const current = state('none');
    const [call] = invoked(current, { command: 'echo secret-token-123' });
    const [result] = returned(current, 'secret-token-123');
    expect(call).toEqual({
      type: 'run.tool_activity',
      runId: 'run_1',
      status: 'invoked',
      toolName: 'Write',
      toolUseId: 'toolu_1',
    });
    expect(result).toEqual({
      type: 'run.tool_activity',
      runId: 'run_1',
      status: 'succeeded',
      toolName: 'Write',
      toolUseId: 'toolu_1',
    });
  });
});

describe('AskUserQuestion', () => {
  it("carries the questions, never the result's text (the answers live in the interaction, redacted when sensitive)", () => {
    const current = state();
    const questions = [
      { question: 'What is the deploy password?', header: 'Password', options: [], multiSelect: false },
    ];
    const [call] = translateFrame(
      current,
      parseCliFrame({
        type: 'assistant',
        parent_tool_use_id: null,
        message: {
          id: 'msg_1',
          content: [{ type: 'tool_use', id: 'toolu_q', name: 'AskUserQuestion', input: { questions } }],
        },
      }),
    );
    expect(call).toMatchObject({ toolName: 'AskUserQuestion', input: { questions } });
    const [result] = translateFrame(
      current,
      parseCliFrame({
        type: 'user',
        parent_tool_use_id: null,
        message: {
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_q',
              content: 'Your questions have been answered: "…"="hunter2"',
            },
          ],
        },
      }),
    );
    expect(result).toMatchObject({ status: 'succeeded', toolName: 'AskUserQuestion' });
    expect(result).not.toHaveProperty('output');
  });
});
