import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProtocolEvent } from '@tether/protocol';
import { createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-deltas-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

/** Resolves with the first published event that matches, then stops following. */
function nextEvent(
  runtime: Awaited<ReturnType<typeof createAgentRuntime>>,
  sessionId: string,
  afterSeq: number,
  matches: (event: ProtocolEvent) => boolean,
): Promise<ProtocolEvent> {
  return new Promise((resolve, reject) => {
    runtime.follow(sessionId, {
      afterSeq,
      onEvent: (event) => {
        if (!matches(event)) return true;
        resolve(event);
        return false;
      },
      onError: reject,
    });
  });
}

type MockTurn = NonNullable<Parameters<typeof createMockProvider>[0]>['turn'];

/** Runs one turn of a mock provider that plays `turn`, and returns the text deltas the log kept. */
async function storedDeltasOf(turn: MockTurn) {
  const runtime = await createAgentRuntime({ providers: [createMockProvider({ turn })] });
  try {
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await runtime.waitForRun(runId);
    const events = await runtime.readEvents(sessionId);
    return events.flatMap((event) => (event.type === 'run.message_delta' ? [event] : []));
  } finally {
    await runtime.shutdown();
  }
}

const textOf = (events: readonly ProtocolEvent[]) =>
  events.map((event) => (event.type === 'run.message_delta' ? event.text : '')).join('');

describe('streamed deltas', () => {
  it('joins the deltas of one block that wait for the same commit into one event, text unchanged', async () => {
    const pieces = ['Hel', 'lo', ', ', 'wor', 'ld', ' \u{1F600}'];
    const deltas = await storedDeltasOf(({ runId, emit }) => {
      for (const text of pieces) emit({ type: 'run.message_delta', runId, blockId: 'm:0', text });
      emit({ type: 'run.message_delta', runId, blockId: 'm:1', text: 'next block' });
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    });
    expect(deltas.map((event) => [event.blockId, event.text])).toEqual([
      ['m:0', pieces.join('')],
      ['m:1', 'next block'],
    ]);
  });

  it('publishes a block’s first delta without waiting for more: a later one is an event of its own', async () => {
    let started!: (turn: { emitDelta: (text: string) => void; complete: () => void }) => void;
    const turn = new Promise<Parameters<typeof started>[0]>((resolve) => {
      started = resolve;
    });
    const runtime = await createAgentRuntime({
      providers: [
        createMockProvider({
          turn: ({ runId, emit }) =>
            started({
              emitDelta: (text) => emit({ type: 'run.message_delta', runId, blockId: 'm:0', text }),
              complete: () => emit({ type: 'run.completed', runId, outcome: 'succeeded' }),
            }),
        }),
      ],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const afterSeq = (await runtime.getSession(sessionId)).lastSeq;
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const { emitDelta, complete } = await turn;
    const isDelta = (event: ProtocolEvent) => event.type === 'run.message_delta';
    const first = nextEvent(runtime, sessionId, afterSeq, isDelta);
    emitDelta('first');
    expect(await first).toMatchObject({ text: 'first' });
    const second = nextEvent(runtime, sessionId, (await first).seq, isDelta);
    emitDelta(' second');
    expect(await second).toMatchObject({ text: ' second' });
    complete();
    await runtime.waitForRun(runId);
    expect(textOf(await runtime.readEvents(sessionId))).toBe('first second');
    await runtime.shutdown();
  });

  it('commits what a message streamed as soon as the provider says the message ended', async () => {
    const deltas = await storedDeltasOf(async ({ runId, emit, session }) => {
      emit({ type: 'run.message_delta', runId, blockId: 'm:0', text: 'ended' });
      session.options.messageEnded?.();
      // Microtasks only: a commit at the coalescing window (a timer) or the next check phase cannot come here.
      for (let turn = 0; turn < 20; turn += 1) await Promise.resolve();
      emit({ type: 'run.message_delta', runId, blockId: 'm:0', text: ' later' });
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    });
    // Held for the window, the two would have been joined into one event of the same commit.
    expect(deltas.map((event) => event.text)).toEqual(['ended', ' later']);
  });
});
