import type { ProtocolEvent } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import {
  activeRun,
  applyEvent,
  canForkAt,
  controlOutputShownAsAnswer,
  openInteractions,
} from './conversation-state.js';
import { fold, openedBody, testSessionId as sessionId } from './conversation-test-events.js';

const runId = `run_${'b'.repeat(32)}`;
const interactionRef = `int_${'c'.repeat(32)}`;

const usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: 0.01 };
const approval = {
  kind: 'approval' as const,
  toolName: 'Bash',
  toolUseId: 'toolu_1',
  category: 'command' as const,
  input: { command: 'ls' },
  offerSessionApproval: true,
  defaultToNo: false,
};

describe('the conversation state', () => {
  it('streams text into its block, keeps thinking and tool rows in order, and sums usage', () => {
    const state = fold([
      openedBody(),
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Hello' }], inputRedacted: false },
      { type: 'run.thinking_delta', runId, blockId: 't1', text: 'Let me ' },
      { type: 'run.thinking_delta', runId, blockId: 't1', text: 'think.' },
      { type: 'run.message_delta', runId, blockId: 'm1', text: 'Hi ' },
      { type: 'run.tool_activity', runId, status: 'invoked', toolName: 'Read', toolUseId: 'toolu_9' },
      { type: 'run.tool_activity', runId, status: 'succeeded', toolName: 'Read', toolUseId: 'toolu_9' },
      { type: 'run.message_delta', runId, blockId: 'm2', text: 'there.' },
      { type: 'run.usage', runId, ...usage },
      { type: 'run.completed', runId, outcome: 'succeeded' },
    ]);
    expect(state.workspacePath).toBe('/repo');
    const run = state.runs[0]!;
    expect(run.input).toBe('Hello');
    expect(run.parts).toEqual([
      { kind: 'thinking', blockId: 't1', text: 'Let me think.' },
      { kind: 'text', blockId: 'm1', text: 'Hi ', subagent: false },
      { kind: 'tool', toolUseId: 'toolu_9', toolName: 'Read', status: 'succeeded' },
      { kind: 'text', blockId: 'm2', text: 'there.', subagent: false },
    ]);
    expect(run.outcome).toBe('succeeded');
    expect(state.totalUsage.costUsd).toBeCloseTo(0.01);
    expect(activeRun(state)).toBeNull();
    expect(state.lastSeq).toBe(10);
  });

  it('keeps a turn the agent began by itself as such: no prompt of the user, its answer, no point to fork at', () => {
    const state = fold([
      openedBody(),
      { type: 'run.started', runId, input: [], inputRedacted: false, startedBy: 'agent' },
      { type: 'run.message_delta', runId, blockId: 'm1', text: 'The background agent has finished.' },
      { type: 'run.usage', runId, ...usage },
      { type: 'run.completed', runId, outcome: 'succeeded', stopReason: 'end_turn' },
    ]);
    const run = state.runs[0]!;
    expect(run).toMatchObject({ startedByAgent: true, input: '', attachments: [], outcome: 'succeeded' });
    expect(run.parts).toEqual([
      { kind: 'text', blockId: 'm1', text: 'The background agent has finished.', subagent: false },
    ]);
    expect(canForkAt(run)).toBe(false);
    expect(state.totalUsage.costUsd).toBeCloseTo(0.01);
  });

  it('drops the text a failed model call had streamed when its retry names the blocks abandoned', () => {
    const state = fold([
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Hello' }], inputRedacted: false },
      { type: 'run.message_delta', runId, blockId: 'm0', text: 'Earlier, whole. ' },
      { type: 'run.thinking_delta', runId, blockId: 'cut:0', text: 'Let me s' },
      { type: 'run.message_delta', runId, blockId: 'cut:1', text: 'This reply is cut short by a d' },
      {
        type: 'run.retrying',
        runId,
        attempt: 1,
        maxAttempts: 2,
        delayMs: 500,
        httpStatus: null,
        abandonedBlockIds: ['cut:0', 'cut:1'],
      },
    ]);
    expect(state.runs[0]!.parts).toEqual([{ kind: 'text', blockId: 'm0', text: 'Earlier, whole. ', subagent: false }]);
    expect(state.runs[0]!.retry).toEqual({ attempt: 1, maxAttempts: 2 });
    const retried = applyEvent(state, {
      type: 'run.message_delta',
      runId,
      blockId: 'retried:0',
      text: 'Hello there.',
      sessionId,
      seq: 6,
      at: '2026-12-01T10:00:01.000Z',
    });
    expect(retried.runs[0]!.parts.map((part) => (part.kind === 'text' ? part.text : ''))).toEqual([
      'Earlier, whole. ',
      'Hello there.',
    ]);
  });

  it('drops the text of a call that broke off when the run ends with no retry after it', () => {
    const state = fold([
      openedBody(),
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Hello' }], inputRedacted: false },
      { type: 'run.message_delta', runId, blockId: 'kept:0', text: 'Looking. ' },
      { type: 'run.message_delta', runId, blockId: 'cut:0', text: 'This reply is cut short by a d' },
      { type: 'run.completed', runId, outcome: 'failed', abandonedBlockIds: ['cut:0'] },
    ]);
    expect(state.runs[0]!.parts).toEqual([{ kind: 'text', blockId: 'kept:0', text: 'Looking. ', subagent: false }]);
  });

  it('ignores an event it has already folded (no doubled text)', () => {
    const once = fold([
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Hi' }], inputRedacted: false },
      { type: 'run.message_delta', runId, blockId: 'm1', text: 'abc' },
    ]);
    const delta = {
      type: 'run.message_delta',
      runId,
      blockId: 'm1',
      text: 'abc',
      sessionId,
      seq: 2,
      at: 'x',
    } as ProtocolEvent;
    expect(applyEvent(once, delta)).toBe(once);
  });

  it('tracks an interaction from request to its end', () => {
    const requested = fold([
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Do it' }], inputRedacted: false },
      { type: 'interaction.requested', runId, interactionRef, request: approval },
    ]);
    expect(openInteractions(requested).map((entry) => entry.interactionRef)).toEqual([interactionRef]);
    expect(activeRun(requested)?.parts).toEqual([{ kind: 'interaction', interactionRef }]);
    const settled = applyEvent(requested, {
      type: 'interaction.settled',
      runId,
      interactionRef,
      outcome: 'approved',
      answer: { decision: 'approve' },
      by: 'host',
      sessionId,
      seq: 3,
      at: 'x',
    });
    expect(openInteractions(settled)).toEqual([]);
    expect(settled.interactions[interactionRef]?.result).toBe('approved');
    const withdrawn = applyEvent(requested, {
      type: 'interaction.withdrawn',
      runId,
      interactionRef,
      sessionId,
      seq: 3,
      at: 'x',
    });
    expect(withdrawn.interactions[interactionRef]?.result).toBe('withdrawn');
    expect(withdrawn.interactions[interactionRef]?.withdrawnByStop).toBe(false);
  });

  it('tells a prompt withdrawn because its run was being stopped from one the agent withdrew', () => {
    const stopped = fold([
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Do it' }], inputRedacted: false },
      { type: 'interaction.requested', runId, interactionRef, request: approval },
      { type: 'run.interrupt_requested', runId },
      { type: 'interaction.withdrawn', runId, interactionRef },
    ]);
    expect(stopped.interactions[interactionRef]).toMatchObject({ result: 'withdrawn', withdrawnByStop: true });
  });

  it('moves agentSeq only on events that can change which modes need a restart', () => {
    const state = fold([
      openedBody(),
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Hi' }], inputRedacted: false },
      { type: 'session.process_started', pid: 42, startTime: null, marker: 'm' },
      { type: 'run.message_delta', runId, blockId: 'm1', text: 'Hello' },
      { type: 'run.completed', runId, outcome: 'succeeded' },
    ]);
    expect(state.agentSeq).toBe(3);
    const stopped = applyEvent(state, {
      type: 'session.process_stopped',
      reason: 'released',
      sessionId,
      seq: 6,
      at: 'x',
    });
    expect(stopped.agentSeq).toBe(6);
    const moded = applyEvent(stopped, {
      type: 'session.mode_changed',
      mode: 'bypass',
      source: 'command',
      sessionId,
      seq: 7,
      at: 'x',
    });
    expect(moded).toMatchObject({ agentSeq: 7, mode: 'bypass' });
    expect(
      applyEvent(moded, { type: 'diagnostic', level: 'debug', code: 'x', sessionId, seq: 8, at: 'x' }).agentSeq,
    ).toBe(7);
  });

  it('marks a control run and keeps its output, and a stop request', () => {
    const state = fold([
      { type: 'run.started', runId, input: null, inputRedacted: false, control: { name: 'cost' } },
      { type: 'run.interrupt_requested', runId },
      { type: 'control.completed', runId, name: 'cost', status: 'succeeded', output: 'Total cost: $0.01' },
    ]);
    expect(state.runs[0]).toMatchObject({ control: 'cost', input: null, stopRequested: true });
    expect(state.runs[0]!.parts).toEqual([
      { kind: 'control', name: 'cost', status: 'succeeded', output: 'Total cost: $0.01' },
    ]);
  });

  it('keeps a compaction where it happened in the run, between the text before and after it', () => {
    const state = fold([
      { type: 'run.started', runId, input: [{ type: 'text', text: 'Go on.' }], inputRedacted: false },
      { type: 'run.message_delta', runId, blockId: 'm1', text: 'Before.' },
      { type: 'context.compacted', runId, trigger: 'automatic', tokensBefore: 180_000, tokensAfter: 9_000 },
      { type: 'run.message_delta', runId, blockId: 'm2', text: 'After.' },
    ]);
    expect(state.runs[0]!.parts.map((part) => part.kind)).toEqual(['text', 'compaction', 'text']);
    expect(state.runs[0]!.parts[1]).toEqual({
      kind: 'compaction',
      trigger: 'automatic',
      tokensBefore: 180_000,
      tokensAfter: 9_000,
    });
  });

  it("tells a control's output the run already answered with from one it did not", () => {
    const report = '## Context Usage\n\n| Category | Tokens |\n|---|---|\n| Free space | 956k |\n';
    const answered = fold([
      { type: 'run.started', runId, input: null, inputRedacted: false, control: { name: 'context' } },
      { type: 'run.message_delta', runId, blockId: 'm1', text: '## Context Usage\n\n| Category | Tokens |\n' },
      { type: 'run.message_delta', runId, blockId: 'm1', text: '|---|---|\n| Free space | 956k |' },
      { type: 'control.completed', runId, name: 'context', status: 'succeeded', output: report },
    ]).runs[0]!;
    expect(controlOutputShownAsAnswer(answered, report)).toBe(true);
    expect(controlOutputShownAsAnswer(answered, 'Total cost: $0.01')).toBe(false);
    const silent = fold([
      { type: 'run.started', runId, input: null, inputRedacted: false, control: { name: 'context' } },
      { type: 'control.completed', runId, name: 'context', status: 'succeeded', output: report },
    ]).runs[0]!;
    expect(controlOutputShownAsAnswer(silent, report)).toBe(false);
  });
});
