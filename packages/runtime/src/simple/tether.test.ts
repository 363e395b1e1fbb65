import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ProtocolEvent } from '@tether/protocol';
import { createMockProvider } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgentRuntime } from '../runtime/agent-runtime.js';
import { createTether } from './tether.js';

let workspace: string;

beforeEach(async () => {
  workspace = await mkdtemp(path.join(os.tmpdir(), 'tether-simple-'));
});

afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

describe('the convenience layer', () => {
  it('iterates one turn from run.started to run.completed', async () => {
    const tether = createTether(await createAgentRuntime({ providers: [createMockProvider()] }));
    const session = await tether.open({ cwd: workspace });
    const events: ProtocolEvent['type'][] = [];
    for await (const event of session.send('fix the failing test')) events.push(event.type);
    expect(events).toEqual(['run.started', 'run.message_delta', 'run.completed']);
    await session.close();
    expect((await session.snapshot()).state).toBe('closed');
    await tether.runtime.shutdown();
  });

  it('keeps the receipt and the completion apart for hosts that need them', async () => {
    const tether = createTether(await createAgentRuntime({ providers: [createMockProvider()] }));
    const session = await tether.open({ cwd: workspace, model: 'sonnet' });
    const turn = session.send('hello');
    const receipt = await turn.receipt;
    expect(receipt).toMatchObject({ type: 'submit_turn', sessionId: session.sessionId });
    const completion = await turn.completion;
    expect(completion).toMatchObject({ runId: receipt.runId, outcome: 'succeeded' });
    const second = await session.send('again').completion;
    expect(second.outcome).toBe('succeeded');
    const resumed = await tether.resume(session.sessionId);
    expect(resumed.sessionId).toBe(session.sessionId);
    await tether.runtime.shutdown();
  });

  it('rejects the receipt (and the iteration) with the typed error', async () => {
    const tether = createTether(await createAgentRuntime({ providers: [createMockProvider()] }));
    const session = await tether.open({ cwd: workspace });
    await session.close();
    const turn = session.send('too late');
    await expect(turn.receipt).rejects.toMatchObject({ code: 'session_closed' });
    await expect(turn.completion).rejects.toMatchObject({ code: 'session_closed' });
    await tether.runtime.shutdown();
  });
});
