import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ProtocolEvent } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { type MockTurnContext, collectUntil, createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-malformed-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** Text that must never reach the log: it only ever appears inside a refused part. */
const refusedText = 'REFUSED-PART-CONTENT';

/** Parts a broken provider could emit for run `runId`, and the type the diagnostic names. */
const malformedParts: { name: string; part: (runId: string) => unknown; reported: string }[] = [
  {
    name: 'a delta whose text is a number',
    part: (runId) => ({ type: 'run.message_delta', runId, blockId: 'b1', text: 42 }),
    reported: 'run.message_delta',
  },
  {
    name: 'a delta without its block id',
    part: (runId) => ({ type: 'run.message_delta', runId, text: refusedText }),
    reported: 'run.message_delta',
  },
  {
    name: 'a delta with a field the protocol does not have',
    part: (runId) => ({ type: 'run.thinking_delta', runId, blockId: 'b1', text: 'x', secret: refusedText }),
    reported: 'run.thinking_delta',
  },
  {
    name: 'a part of an unknown type',
    part: (runId) => ({ type: `run.${refusedText.toLowerCase()}`, runId, text: refusedText }),
    reported: 'unknown',
  },
  {
    name: 'a completion with an outcome the protocol does not have',
    part: (runId) => ({ type: 'run.completed', runId, outcome: 'exploded' }),
    reported: 'run.completed',
  },
  {
    name: 'a tool activity with an empty tool name',
    part: (runId) => ({ type: 'run.tool_activity', runId, status: 'invoked', toolName: '', toolUseId: 't1' }),
    reported: 'run.tool_activity',
  },
  {
    name: 'an interaction request without a request',
    part: (runId) => ({ type: 'interaction.requested', runId, interactionRef: 'int_1' }),
    reported: 'interaction.requested',
  },
  {
    name: 'a usage report with a negative count',
    part: (runId) => ({ type: 'run.usage', runId, inputTokens: -1, outputTokens: 'many' }),
    reported: 'run.usage',
  },
  {
    name: 'a session part with a wrong type',
    part: () => ({ type: 'session.mode_changed', mode: 'yolo', source: 'provider' }),
    reported: 'session.mode_changed',
  },
  { name: 'no object at all', part: () => null, reported: 'unknown' },
];

/** First turn: a good delta, the malformed part, then output as if nothing happened; later turns answer normally. */
function brokenFirstTurn(malformed: (runId: string) => unknown) {
  return ({ runId, emit, session }: MockTurnContext) => {
    emit({ type: 'run.message_delta', runId, blockId: 'b1', text: 'before ' });
    if (session.turns.length === 1) {
      emit(malformed(runId) as AgentProviderV1Part);
      emit({ type: 'run.message_delta', runId, blockId: 'b1', text: 'after' });
    }
    emit({ type: 'run.completed', runId, outcome: 'succeeded' });
  };
}

describe('provider parts that do not match the protocol', () => {
  it.each(malformedParts)(
    '$name: fails the run with provider_contract_violation once, stores nothing unreadable, and the next turn works',
    async ({ part, reported }) => {
      const provider = createMockProvider({ turn: brokenFirstTurn(part) });
      const runtime = await createAgentRuntime({ providers: [provider] });
      const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });

      const run = await runtime.waitForRun(runId);
      expect(run.outcome).toBe('failed');
      expect(run.error).toMatchObject({ code: 'provider_contract_violation', details: { reason: 'malformed_part' } });
      // The agent is told to stop working on a run Tether ended.
      expect(provider.sessions[0]!.interrupts).toEqual([runId]);

      const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
      expect((await runtime.waitForRun(next.runId)).outcome).toBe('succeeded');

      const events = await runtime.readEvents(sessionId);
      // What a client does with each row: JSON off the wire, then the protocol's schema.
      for (const event of events) expect(ProtocolEvent.safeParse(JSON.parse(JSON.stringify(event))).success).toBe(true);
      expect(JSON.stringify(events)).not.toContain(refusedText);
      const ofFirstRun = events.filter(
        (event) => 'runId' in event && event.runId === runId && event.type !== 'diagnostic',
      );
      expect(ofFirstRun.map((event) => event.type)).toEqual(['run.started', 'run.message_delta', 'run.completed']);
      expect(events.filter((event) => event.type === 'diagnostic').map((event) => [event.level, event.code])).toEqual([
        ['error', `runtime.malformed_part.${reported}`],
        ['debug', 'runtime.part_for_inactive_run'],
      ]);
      expect((await runtime.getSession(sessionId)).state).toBe('idle');
      await runtime.shutdown();
    },
  );

  it('a malformed part while no run is active is dropped with a diagnostic and fails nothing', async () => {
    const provider = createMockProvider();
    const runtime = await createAgentRuntime({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await runtime.waitForRun(runId);
    provider.sessions[0]!.emit({
      type: 'session.model_changed',
      model: 7,
      source: 'provider',
    } as unknown as AgentProviderV1Part);
    provider.sessions[0]!.emit({ type: 'session.model_changed', model: 'mock-opus', source: 'provider' });
    const events = await collectUntil(runtime, sessionId, (event) => event.type === 'session.model_changed');
    expect(events.filter((event) => event.type === 'diagnostic').map((event) => event.code)).toEqual([
      'runtime.malformed_part.session.model_changed',
    ]);
    expect((await runtime.getRun(runId)).outcome).toBe('succeeded');
    expect((await runtime.getSession(sessionId)).model).toBe('mock-opus');
    await runtime.shutdown();
  });
});
