import type { AgentProviderV1Part } from '@tether/provider-spec';
import { describe, expect, it } from 'vitest';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import { readNdjson, replay, stateWithTurn } from './translator.test-helper.js';
import { translateFrame } from './translate-frame.js';
import { createTranslatorState } from './translator-state.js';

function text(parts: AgentProviderV1Part[], type: 'run.message_delta' | 'run.thinking_delta', runId = 'run_1'): string {
  return parts
    .filter((part) => part.type === type && part.runId === runId && part.parentToolUseId === undefined)
    .map((part) => (part as { text: string }).text)
    .join('');
}

describe('translating recorded CLI transcripts', () => {
  it('text turn: deltas in order, usage, the checkpoint, then a succeeded completion', () => {
    const parts = replay('text-turn');
    const types = parts.map((part) => part.type);
    expect(types.slice(0, 3)).toEqual([
      'session.mode_changed',
      'session.model_changed',
      'session.provider_session_changed',
    ]);
    expect(parts[1]).toEqual({ type: 'session.model_changed', model: 'claude-opus-5-5', source: 'provider' });
    expect(parts[0]).toEqual({ type: 'session.mode_changed', mode: 'ask_before_edit', source: 'provider' });
    expect(types.filter((type) => type === 'run.message_delta').length).toBeGreaterThanOrEqual(5);
    expect(types.slice(-3)).toEqual(['run.usage', 'run.checkpointed', 'run.completed']);
    expect(parts.at(-2)).toEqual({
      type: 'run.checkpointed',
      runId: 'run_1',
      providerSessionId: 'bde56503-3d8b-4fc2-88bb-3bb84e14fb91',
      inputMessageId: '7be82d97-76e1-4e8b-ac67-c125ca6bd525',
      lastMessageId: '9d0ac063-d182-49c8-928d-516b079ae32f',
    });
    expect(parts.at(-1)).toEqual({
      type: 'run.completed',
      runId: 'run_1',
      outcome: 'succeeded',
      stopReason: 'end_turn',
    });
    expect(text(parts, 'run.message_delta').length).toBeGreaterThan(0);
    const usage = parts.find((part) => part.type === 'run.usage');
    expect(usage).toMatchObject({
      runId: 'run_1',
      inputTokens: expect.any(Number),
      outputTokens: expect.any(Number),
      costUsd: expect.any(Number),
    });
  });

  it('two turns: each run gets its own deltas and completion; cost is the per-process difference', () => {
    const parts = replay('two-turns');
    const completions = parts.filter((part) => part.type === 'run.completed');
    expect(completions.map((part) => [part.runId, part.outcome])).toEqual([
      ['run_1', 'succeeded'],
      ['run_2', 'succeeded'],
    ]);
    expect(text(parts, 'run.message_delta', 'run_1')).not.toBe(text(parts, 'run.message_delta', 'run_2'));
    const results = readNdjson('two-turns.ndjson').filter(
      (value) => (value as { type?: string }).type === 'result',
    ) as { total_cost_usd: number }[];
    const costs = parts
      .filter((part) => part.type === 'run.usage')
      .map((part) => (part as { costUsd: number }).costUsd);
    expect(costs[0]).toBeCloseTo(results[0]!.total_cost_usd, 10);
    expect(costs[0]! + costs[1]!).toBeCloseTo(results[1]!.total_cost_usd, 10);
    // The conversation id is reported once, not once per turn.
    expect(parts.filter((part) => part.type === 'session.provider_session_changed')).toHaveLength(1);
  });

  it('automatic compaction: the turn that found the context full says so, then answers as ever', () => {
    const parts = replay('auto-compact');
    expect(parts.filter((part) => part.type === 'context.compacted')).toEqual([
      { type: 'context.compacted', runId: 'run_2', trigger: 'automatic', tokensBefore: 995_014, tokensAfter: 2629 },
    ]);
    // The summary the CLI puts in the conversation is not the answer.
    expect(text(parts, 'run.message_delta', 'run_2')).toBe('Second answer, after the compaction.');
    const second = parts.filter((part) => 'runId' in part && part.runId === 'run_2').map((part) => part.type);
    expect(second.indexOf('context.compacted')).toBeLessThan(second.indexOf('run.message_delta'));
    expect(second.at(-1)).toBe('run.completed');
  });

  it('a compaction the host asked for (/compact) is `requested`; counts the CLI does not give are null', () => {
    const current = stateWithTurn();
    const boundary = (metadata: Record<string, unknown>) =>
      translateFrame(
        current,
        parseCliFrame({ type: 'system', subtype: 'compact_boundary', compact_metadata: metadata }),
      );
    expect(boundary({ trigger: 'manual', pre_tokens: 52_000, post_tokens: 3_100 })).toEqual([
      { type: 'context.compacted', runId: 'run_1', trigger: 'requested', tokensBefore: 52_000, tokensAfter: 3_100 },
    ]);
    expect(boundary({ trigger: 'auto', pre_tokens: -1, post_tokens: 1.5 })).toEqual([
      { type: 'context.compacted', runId: 'run_1', trigger: 'automatic', tokensBefore: null, tokensAfter: null },
    ]);
  });

  it('thinking turn: thinking and answer are separate blocks', () => {
    const parts = replay('thinking-turn');
    expect(text(parts, 'run.thinking_delta').length).toBeGreaterThan(0);
    expect(text(parts, 'run.message_delta').length).toBeGreaterThan(0);
    const thinkingBlocks = new Set(
      parts.filter((part) => part.type === 'run.thinking_delta').map((part) => (part as { blockId: string }).blockId),
    );
    const textBlocks = new Set(
      parts.filter((part) => part.type === 'run.message_delta').map((part) => (part as { blockId: string }).blockId),
    );
    expect([...thinkingBlocks].some((block) => textBlocks.has(block))).toBe(false);
  });

  it('tool use: invoked with its input, succeeded with its output, with text before and after in different blocks', () => {
    const parts = replay('tool-use-bypass');
    const tools = parts.filter((part) => part.type === 'run.tool_activity');
    expect(tools.map((part) => [part.status, part.toolName])).toEqual([
      ['invoked', 'Bash'],
      ['succeeded', 'Bash'],
    ]);
    expect(tools[0]!.toolUseId).toBe(tools[1]!.toolUseId);
    expect(tools[0]!.input).toEqual({ command: 'echo hi', description: 'Print hi' });
    expect(tools[1]!.output).toBe('hi');
    expect(tools.some((part) => 'inputOmitted' in part || 'outputTruncated' in part)).toBe(false);
    // The model's own end of the turn (the CLI's result says end_turn too).
    expect(parts.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded', stopReason: 'end_turn' });
    // The cut point is the answer after the tool, not the message that called it.
    expect(parts.at(-2)).toMatchObject({
      type: 'run.checkpointed',
      lastMessageId: 'f8b77746-d6dd-40e5-ac74-eb054fd9c3ae',
    });
  });

  it('API error 500: a retry event, no error text as the answer, failed with the status', () => {
    const parts = replay('api-error-500');
    expect(parts.find((part) => part.type === 'run.retrying')).toMatchObject({ httpStatus: 500, attempt: 1 });
    // The CLI's synthetic error message is no answer to cut after; the input still has its file checkpoint.
    expect(parts.find((part) => part.type === 'run.checkpointed')).toMatchObject({ lastMessageId: null });
    expect(text(parts, 'run.message_delta')).toBe('');
    expect(parts.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'provider_api_error', details: { httpStatus: 500 } },
    });
    // The model never answered: the stop_sequence of the CLI's synthetic error message is not its stop.
    expect(parts.at(-1)).not.toHaveProperty('stopReason');
  });

  it('answer cut at the output limit: max_tokens though the CLI continued it three times and ended with a synthetic stop_sequence', () => {
    const parts = replay('max-tokens-stop');
    expect(parts.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'provider_api_error', details: { reason: 'max_output_tokens' } },
      stopReason: 'max_tokens',
    });
    // The CLI's error text is no part of the answer; the model's cut text is.
    expect(text(parts, 'run.message_delta')).toContain('This answer is cut off at the output limit');
    expect(text(parts, 'run.message_delta')).not.toContain('API Error');
  });

  it('refused answer: stopReason refusal, failed with the reason, not a connection failure', () => {
    const parts = replay('refusal-stop');
    expect(parts.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'provider_api_error', details: { reason: 'refusal' } },
      stopReason: 'refusal',
    });
  });

  it("Edit after Read: the Edit's input carries the path and the old and new text; the Read's output the file's text", () => {
    const parts = replay('edit-tool-bypass');
    const tools = parts.filter((part) => part.type === 'run.tool_activity');
    expect(tools.map((part) => [part.status, part.toolName])).toEqual([
      ['invoked', 'Read'],
      ['succeeded', 'Read'],
      ['invoked', 'Edit'],
      ['succeeded', 'Edit'],
    ]);
    expect(tools[0]!.input).toEqual({ file_path: '/tmp/WORKSPACE/notes.txt' });
    expect(tools[1]!.output).toContain('hello world');
    expect(tools[2]!.input).toEqual({
      file_path: '/tmp/WORKSPACE/notes.txt',
      old_string: 'hello world',
      new_string: 'hello tether',
      // The CLI fills in the default before the frame is written.
      replace_all: false,
    });
    expect(tools[3]!.output).toContain('notes.txt');
    expect(parts.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded', stopReason: 'end_turn' });
  });

  it("unknown resume id: resume_not_found, and the startup result's throwaway id is not followed", () => {
    const parts = replay('resume-unknown', { providerSessionId: 'b9a91f66-0000-4000-8000-000000000000' });
    expect(parts.filter((part) => part.type === 'session.provider_session_changed')).toHaveLength(0);
    expect(parts.filter((part) => part.type === 'run.checkpointed')).toHaveLength(0);
    expect(parts.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'resume_not_found' },
    });
  });

  it("denied tool prompt: the tool fails with the denial's message, the model is called again, the run succeeds", () => {
    const parts = replay('permission-request-default-mode');
    const tools = parts.filter((part) => part.type === 'run.tool_activity');
    expect(tools.map((part) => part.status)).toEqual(['invoked', 'failed']);
    expect(tools[0]!.input).toEqual({ file_path: '/tmp/WORKSPACE/notes.txt', content: 'hello\n' });
    expect(tools[1]!.output).toBe('approvals are not enabled');
    expect(parts.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  });

  it('subagent (background): its text is attributed to the Agent tool call, never merged into the answer', () => {
    const parts = replay('subagent-background');
    const agentCall = parts.find(
      (part): part is Extract<AgentProviderV1Part, { type: 'run.tool_activity' }> =>
        part.type === 'run.tool_activity' && part.toolName === 'Agent',
    );
    expect(agentCall).toBeDefined();
    const subagentText = parts.filter(
      (part) => part.type === 'run.message_delta' && part.parentToolUseId !== undefined,
    );
    expect(subagentText.length).toBeGreaterThan(0);
    expect(
      subagentText.every((part) => (part as { parentToolUseId: string }).parentToolUseId === agentCall!.toolUseId),
    ).toBe(true);
    expect(text(parts, 'run.message_delta')).not.toContain('Hello from the background subagent');
    // The turn the CLI begins by itself for the task's report is a run of its own: a point to cut after
    // its answer, none for files (its input's id is never shown).
    const ownRun = parts.filter((part) => 'runId' in part && part.runId === 'agent_run_1');
    expect(text(ownRun, 'run.message_delta', 'agent_run_1')).toBe('The background agent has finished and said hello.');
    expect(ownRun.find((part) => part.type === 'run.checkpointed')).toMatchObject({
      inputMessageId: null,
      lastMessageId: expect.any(String),
    });
    expect(ownRun.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded', stopReason: 'end_turn' });
    expect(parts.filter((part) => part.type === 'run.completed')).toHaveLength(2);
    expect(parts.some((part) => part.type === 'diagnostic' && part.code === 'claude.result_without_run')).toBe(false);
  });

  it('subagent (foreground): the prompt frame carries the parent id and adds nothing to the answer', () => {
    const parts = replay('subagent-frames');
    expect(text(parts, 'run.message_delta')).toBe('The subagent said hello.');
    // An array content's text blocks: the subagent's report, handed back.
    const agentResult = parts.find((part) => part.type === 'run.tool_activity' && part.status === 'succeeded');
    expect(agentResult).toMatchObject({
      toolName: 'Agent',
      output: expect.stringContaining('Hello from the subagent.'),
    });
    expect(parts.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded', stopReason: 'end_turn' });
  });
});

describe('translator edge cases', () => {
  const state = stateWithTurn;

  it('splits a delta longer than 100,000 characters', () => {
    const current = state();
    const huge = 'x'.repeat(250_001);
    const parts = translateFrame(
      current,
      parseCliFrame({
        type: 'stream_event',
        parent_tool_use_id: null,
        event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: huge } },
      }),
    );
    expect(parts.map((part) => (part as { text: string }).text.length)).toEqual([100_000, 100_000, 50_001]);
  });

  describe('a call retried after it broke off mid-stream', () => {
    const streamEvent = (event: Record<string, unknown>, parent: string | null = null, extra = {}) =>
      parseCliFrame({ type: 'stream_event', parent_tool_use_id: parent, event, ...extra });
    const message = (id: string, parent: string | null = null) =>
      streamEvent({ type: 'message_start', message: { id, content: [] } }, parent);
    const textDelta = (index: number, value: string, parent: string | null = null) =>
      streamEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: value } }, parent);
    const thinking = (index: number, value: string) =>
      streamEvent({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: value } });
    /** The synthetic end CLI 2.1.332 gives a call that broke off: blocks from `from` on are not kept. */
    const abandonedStop = (id: string, from: number) =>
      streamEvent({ type: 'message_stop' }, null, { abandoned_blocks: { api_message_id: id, from_block_index: from } });
    const retry = () =>
      parseCliFrame({
        type: 'system',
        subtype: 'api_retry',
        attempt: 1,
        max_retries: 2,
        retry_delay_ms: 500,
        error_status: null,
      });
    const retryings = (parts: AgentProviderV1Part[]) =>
      parts.flatMap((part) => (part.type === 'run.retrying' ? [part.abandonedBlockIds ?? []] : []));

    it('run.retrying names the blocks the failed attempt streamed; the others are the answer', () => {
      const current = state();
      const frames = [
        // A subagent streaming meanwhile: the main call's retry leaves its message alone.
        message('msg_subagent', 'toolu_1'),
        textDelta(0, 'Subagent text.', 'toolu_1'),
        // The first attempt as CLI 2.1.332 prints it when the connection drops: its deltas, then its end.
        message('msg_first'),
        thinking(0, 'Let me s'),
        textDelta(1, 'This reply is cut'),
        streamEvent({ type: 'content_block_stop', index: 1 }),
        abandonedStop('msg_first', 0),
        retry(),
        // The retry streams the whole answer again, to its message_stop.
        message('msg_second'),
        textDelta(0, 'Hello there.'),
        streamEvent({ type: 'message_delta', delta: { stop_reason: 'end_turn' } }),
        streamEvent({ type: 'message_stop' }),
        // A later call that fails before it streams anything abandons nothing (the answer above is whole).
        retry(),
      ];
      const parts = frames.flatMap((frame) => translateFrame(current, frame));
      expect(parts.find((part) => part.type === 'run.retrying')).toEqual({
        type: 'run.retrying',
        runId: 'run_1',
        attempt: 1,
        maxAttempts: 2,
        delayMs: 500,
        httpStatus: null,
        abandonedBlockIds: ['msg_first:0', 'msg_first:1'],
      });
      expect(retryings(parts)).toEqual([['msg_first:0', 'msg_first:1'], []]);
      // Every delta went on at once (nothing held back); the blocks not abandoned are the answer.
      const abandoned = new Set(retryings(parts)[0]);
      const kept = parts.filter((part) => !('blockId' in part && abandoned.has(part.blockId)));
      expect(text(parts, 'run.message_delta')).toBe('This reply is cutHello there.');
      expect(text(kept, 'run.message_delta')).toBe('Hello there.');
      expect(text(kept, 'run.thinking_delta')).toBe('');
    });

    it('only the blocks the CLI does not keep; all of an attempt retried while open; nothing of an earlier turn', () => {
      const kept = state();
      const keptParts = [
        message('msg_a'),
        textDelta(0, 'Kept. '),
        textDelta(1, 'Cut'),
        abandonedStop('msg_a', 1),
        retry(),
      ];
      expect(retryings(keptParts.flatMap((frame) => translateFrame(kept, frame)))).toEqual([['msg_a:1']]);

      const open = state();
      const openParts = [message('msg_b'), textDelta(0, 'Cut off'), retry()];
      expect(retryings(openParts.flatMap((frame) => translateFrame(open, frame)))).toEqual([['msg_b:0']]);

      // An interrupt ends a message the same way, with no retry: the next turn's retry is its own.
      const interrupted = state();
      for (const frame of [message('msg_c'), textDelta(0, 'Stopped'), abandonedStop('msg_c', 0)])
        translateFrame(interrupted, frame);
      translateFrame(interrupted, parseCliFrame({ type: 'result', subtype: 'success', is_error: false }));
      interrupted.turn = state().turn;
      expect(retryings(translateFrame(interrupted, retry()))).toEqual([[]]);
    });
  });

  it('ignores a result stamped for input it did not submit', () => {
    const current = state();
    const parts = translateFrame(
      current,
      parseCliFrame({ type: 'result', subtype: 'success', is_error: false, user_message_uuids: ['someone-else'] }),
    );
    expect(parts).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.result_for_other_input', runId: 'run_1' },
    ]);
    expect(current.turn).not.toBeNull();
  });

  it('checkpoints after the main answer only: a subagent message is not a cut point; after the summary for /compact; the new conversation for /clear; none for another slash command (a control or typed) or an ephemeral session', () => {
    const answer = (uuid: string, parent: string | null) =>
      parseCliFrame({
        type: 'assistant',
        uuid,
        parent_tool_use_id: parent,
        message: { id: `msg_${uuid}`, content: [{ type: 'text', text: 'x' }] },
      });
    const resultFields = { type: 'result', subtype: 'success', is_error: false, session_id: 'conversation' };
    const result = parseCliFrame(resultFields);
    const current = state();
    translateFrame(current, answer('main-answer', null));
    translateFrame(current, answer('subagent-answer', 'toolu_1'));
    const checkpointAfter = (lastMessageId: string) => ({
      type: 'run.checkpointed',
      runId: 'run_1',
      providerSessionId: 'conversation',
      inputMessageId: 'send-1',
      lastMessageId,
    });
    expect(translateFrame(current, result)).toContainEqual(checkpointAfter('main-answer'));
    const control = state();
    control.turn = { ...control.turn!, control: 'cost' };
    translateFrame(control, answer('control-answer', null));
    expect(translateFrame(control, result).map((part) => part.type)).toEqual(['control.completed', 'run.completed']);
    // A slash command typed as a turn's text is the control: the result names it.
    const typed = state();
    translateFrame(typed, answer('cost-answer', null));
    const typedResult = parseCliFrame({ ...resultFields, local_command: 'cost' });
    expect(translateFrame(typed, typedResult).map((part) => part.type)).toEqual(['run.completed']);
    // /compact (sent as the control, or typed): after its boundary, the summary it replaced the
    // conversation with, then its output, as recorded by CLI 2.1.332.
    const entry = (uuid: string, text: string) =>
      parseCliFrame({ type: 'user', uuid, parent_tool_use_id: null, message: { role: 'user', content: text } });
    const boundary = parseCliFrame({
      type: 'system',
      subtype: 'compact_boundary',
      compact_metadata: { trigger: 'manual' },
    });
    for (const control of ['compact', undefined]) {
      const compact = state();
      compact.turn = { ...compact.turn!, ...(control ? { control } : {}) };
      translateFrame(compact, answer('before-compaction', null));
      translateFrame(compact, boundary);
      translateFrame(compact, entry('summary', 'This session is being continued from a previous conversation…'));
      translateFrame(compact, entry('output', '<local-command-stdout>Compacted </local-command-stdout>'));
      const compactResult = parseCliFrame({ ...resultFields, local_command: 'compact' });
      expect(translateFrame(compact, compactResult)).toContainEqual(checkpointAfter('output'));
    }
    // /clear, typed: the new conversation, empty.
    const clear = state();
    translateFrame(
      clear,
      parseCliFrame({ type: 'conversation_reset', new_conversation_id: 'cleared', trigger: 'clear' }),
    );
    expect(translateFrame(clear, parseCliFrame({ ...resultFields, local_command: 'clear' }))).toContainEqual({
      ...checkpointAfter('x'),
      inputMessageId: null,
      lastMessageId: null,
    });
    const ephemeral = createTranslatorState({
      providerSessionId: 'conversation',
      reportedProviderSessionId: 'conversation',
      conversationEstablished: true,
      keepsTranscript: false,
    });
    ephemeral.turn = state().turn;
    translateFrame(ephemeral, answer('ephemeral-answer', null));
    expect(translateFrame(ephemeral, result).map((part) => part.type)).toEqual(['run.completed']);
  });

  it('drops frames when no run is active, noting it once', () => {
    const current = state();
    current.turn = null;
    const frame = parseCliFrame({
      type: 'stream_event',
      parent_tool_use_id: null,
      event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } },
    });
    expect(translateFrame(current, frame)).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.frame_without_run' },
    ]);
    expect(translateFrame(current, frame)).toEqual([]);
  });

  it('tolerates unknown frame types and malformed known ones', () => {
    const current = state();
    expect(translateFrame(current, parseCliFrame({ type: 'brand_new_frame', x: 1 }))).toEqual([]);
    expect(translateFrame(current, parseCliFrame({ type: 'assistant', message: 'not an object' }))).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.malformed_assistant', runId: 'run_1' },
    ]);
  });
});

describe('correlation by stamped uuids', () => {
  const delta = (text: string) =>
    parseCliFrame({
      type: 'stream_event',
      parent_tool_use_id: null,
      event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    });
  const result = (fields: Record<string, unknown> = {}) =>
    parseCliFrame({
      type: 'result',
      subtype: 'success',
      is_error: false,
      session_id: 'conversation',
      num_turns: 1,
      ...fields,
    });

  function waiting(correlation?: 'stamped' | 'legacy-unstamped') {
    const value = createTranslatorState({
      providerSessionId: 'conversation',
      reportedProviderSessionId: 'conversation',
      conversationEstablished: true,
      ...(correlation ? { correlation } : {}),
    });
    value.turn = { runId: 'run_1', uuid: 'send-1', started: false, toolsRunning: 0, interruptRequested: false };
    return value;
  }

  it('stamped: a turn the CLI ran for input we did not submit is dropped until our stamp arrives', () => {
    const current = waiting();
    // The CLI's own follow-up turn (e.g. for a finished background task) runs before ours.
    expect(translateFrame(current, delta('not ours'))).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.frame_for_other_input', runId: 'run_1' },
    ]);
    expect(translateFrame(current, result())).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.result_for_other_input', runId: 'run_1' },
    ]);
    expect(current.turn).not.toBeNull();
    translateFrame(current, parseCliFrame({ type: 'command_lifecycle', command_uuid: 'send-1', state: 'queued' }));
    expect(current.turn?.started).toBe(false);
    translateFrame(current, parseCliFrame({ type: 'command_lifecycle', command_uuid: 'send-1', state: 'started' }));
    expect(translateFrame(current, delta('ours'))).toEqual([
      { type: 'run.message_delta', runId: 'run_1', blockId: 'message:0', text: 'ours' },
    ]);
    expect(translateFrame(current, result({ user_message_uuids: ['send-1'] })).at(-1)).toEqual({
      type: 'run.completed',
      runId: 'run_1',
      outcome: 'succeeded',
    });
  });

  it('stamped: a startup failure ends the turn though it names no input', () => {
    const current = waiting();
    const parts = translateFrame(
      current,
      result({
        subtype: 'error_during_execution',
        is_error: true,
        num_turns: 0,
        errors: ['No conversation found with session ID: x'],
      }),
    );
    expect(parts.at(-1)).toMatchObject({
      type: 'run.completed',
      runId: 'run_1',
      outcome: 'failed',
      error: { code: 'resume_not_found' },
    });
  });

  it('legacy-unstamped: frames and the result belong to the turn in flight by position', () => {
    const current = waiting('legacy-unstamped');
    expect(translateFrame(current, delta('hello'))).toEqual([
      { type: 'run.message_delta', runId: 'run_1', blockId: 'message:0', text: 'hello' },
    ]);
    expect(translateFrame(current, result()).at(-1)).toEqual({
      type: 'run.completed',
      runId: 'run_1',
      outcome: 'succeeded',
    });
    expect(current.correlation).toBe('legacy-unstamped');
  });

  it('legacy-unstamped lapses the moment a stamp is seen: stamped rules from then on', () => {
    const current = waiting('legacy-unstamped');
    const lapsed = translateFrame(
      current,
      parseCliFrame({ type: 'command_lifecycle', command_uuid: 'someone-else', state: 'queued' }),
    );
    expect(lapsed).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.correlation_stamped', runId: 'run_1' },
    ]);
    expect(current.correlation).toBe('stamped');
    expect(translateFrame(current, delta('not ours'))).toEqual([
      { type: 'diagnostic', level: 'debug', code: 'claude.frame_for_other_input', runId: 'run_1' },
    ]);
    translateFrame(
      current,
      parseCliFrame({ type: 'system', subtype: 'init', session_id: 'conversation', user_message_uuids: ['send-1'] }),
    );
    expect(translateFrame(current, delta('ours'))).toEqual([
      { type: 'run.message_delta', runId: 'run_1', blockId: 'message:0', text: 'ours' },
    ]);
  });
});

describe('assistant errors', () => {
  it('become one warning diagnostic with an allowlisted token; the text never reaches the answer', () => {
    const current = createTranslatorState({
      providerSessionId: 'c',
      reportedProviderSessionId: 'c',
      conversationEstablished: true,
    });
    current.turn = { runId: 'run_1', uuid: 'send-1', started: true, toolsRunning: 0, interruptRequested: false };
    const frame = (error: string) =>
      parseCliFrame({
        type: 'assistant',
        error,
        is_api_error_message: true,
        message: { id: 'm', content: [{ type: 'text', text: 'API Error: 500 secret details' }] },
      });
    expect(translateFrame(current, frame('server_error'))).toEqual([
      { type: 'diagnostic', level: 'warning', code: 'claude.assistant_error.server_error', runId: 'run_1' },
    ]);
    expect(translateFrame(current, frame('server_error'))).toEqual([]);
    expect(translateFrame(current, frame('a new token: with prose'))).toEqual([
      { type: 'diagnostic', level: 'warning', code: 'claude.assistant_error.unknown', runId: 'run_1' },
    ]);
  });
});

describe('the model a turn reports', () => {
  const init = (model: string) =>
    parseCliFrame({
      type: 'system',
      subtype: 'init',
      session_id: 'conversation',
      model,
      user_message_uuids: ['send-1'],
    });
  const modelChanges = (parts: AgentProviderV1Part[]) =>
    parts.filter((part) => part.type === 'session.model_changed').map((part) => (part as { model: string }).model);

  it('is a change, unless a set_model was answered before it (the turn runs on the model it was taken in on)', () => {
    const reported = stateWithTurn();
    reported.reportedModel = 'claude-opus-5-5';
    expect(modelChanges(translateFrame(reported, init('claude-haiku-5-5')))).toEqual(['claude-haiku-5-5']);

    const setAhead = stateWithTurn();
    setAhead.reportedModel = 'claude-haiku-5-5';
    setAhead.turn!.modelSetBeforeInit = 'claude-haiku-5-5';
    expect(modelChanges(translateFrame(setAhead, init('claude-opus-5-5')))).toEqual([]);
    expect(setAhead.reportedModel).toBe('claude-haiku-5-5');
    // Once: the turn's next init (after a /clear, say) is reported as any is.
    expect(modelChanges(translateFrame(setAhead, init('claude-opus-5-5')))).toEqual(['claude-opus-5-5']);
  });

  it("keeps a set answered ahead of the turn's init for that turn's own init, not another's, and drops it with the turn", () => {
    const state = stateWithTurn();
    state.reportedModel = 'claude-haiku-5-5';
    state.turn!.modelSetBeforeInit = 'claude-haiku-5-5';
    state.turn = null;
    // A turn the agent began, or the next of ours: its init is reported.
    expect(modelChanges(translateFrame(state, init('claude-opus-5-5')))).toEqual(['claude-opus-5-5']);
  });
});
