import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, waitForEvent, inputLifecycle } from '@tether/testkit';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/** The conversation the model was sent in each model turn, as text. */
function sentHistories(): string[] {
  return environment.api.requests
    .filter((request) => request.kind === 'turn')
    .map((request) => JSON.stringify((request.body as { messages: unknown }).messages));
}

// The runtime's follow-ups over the real binary and the fake API, through the default transport
// (what the provider does with a steer runs once per transport in tests/conformance).
describe('follow-ups sent while a run works', () => {
  async function runningTool() {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      permissionMode: 'bypass',
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'sleep 2; echo slept', description: 'Sleep' }),
      textReply('First done.'),
      textReply('Second done.'),
    );
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Run the tool.' }] });
    await waitForEvent(runtime, sessionId, 'run.tool_activity', { where: (event) => event.status === 'invoked' });
    return { runtime, sessionId, first };
  }

  it('after_turn: queued while the tool runs, then run as the next run, its own turn for the model', async () => {
    const { runtime, sessionId, first } = await runningTool();
    const queued = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Now mention bananas.' }],
      delivery: 'after_turn',
    });
    expect(queued).toMatchObject({ queued: true, inputId: expect.stringMatching(/^inp_/) });
    expect((await runtime.getSession(sessionId)).queuedInputs).toHaveLength(1);

    expect((await runtime.waitForRun(queued.runId)).outcome).toBe('succeeded');
    expect((await runtime.getRun(first.runId)).outcome).toBe('succeeded');
    expect(inputLifecycle(await runtime.readEvents(sessionId))).toEqual([
      `run.started ${first.runId}`,
      `input.queued ${queued.runId}`,
      `run.completed ${first.runId}`,
      `input.started ${queued.runId}`,
      `run.started ${queued.runId}`,
      `run.completed ${queued.runId}`,
    ]);
    const histories = sentHistories();
    expect(histories).toHaveLength(3);
    expect(histories.slice(0, 2).some((history) => history.includes('bananas'))).toBe(false);
    expect(histories[2]).toContain('Now mention bananas.');
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
  });

  it("after_turn: a follow-up that starts at the run's end is not kept waiting by a context measurement: the context is measured after it, not between", async () => {
    const { runtime, sessionId } = await runningTool();
    const queued = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Now mention bananas.' }],
      delivery: 'after_turn',
    });
    expect((await runtime.waitForRun(queued.runId)).outcome).toBe('succeeded');
    // The first measurement: none between the first run's end and the follow-up's line (the CLI
    // answers a request before it reads a line written after it).
    const measured = await waitForEvent(runtime, sessionId, 'session.context_measured');
    const followUpEnd = (await runtime.readEvents(sessionId)).find(
      (event) => event.type === 'run.completed' && event.runId === queued.runId,
    );
    expect(measured.seq).toBeGreaterThan(followUpEnd?.seq ?? Number.POSITIVE_INFINITY);
    expect(measured.contextUsage.totalTokens).toBeGreaterThan(0);
  });

  it('steer: handed into the running turn, the model gets it beside the tool result, and no extra run starts', async () => {
    const { runtime, sessionId, first } = await runningTool();
    const steered = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Also mention bananas.' }],
      delivery: 'steer',
    });
    expect(steered).toMatchObject({ runId: first.runId, queued: true });
    expect((await runtime.waitForRun(first.runId)).outcome).toBe('succeeded');
    const events = await runtime.readEvents(sessionId);
    expect(inputLifecycle(events)).toEqual([
      `run.started ${first.runId}`,
      `input.queued ${first.runId}`,
      `input.folded ${first.runId}`,
      `run.completed ${first.runId}`,
    ]);
    const histories = sentHistories();
    expect(histories).toHaveLength(2);
    expect(histories[1]).toContain('Also mention bananas.');
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
  });

  it('steer while text streams: the run keeps one checkpoint, before its own input, so a rewind with files undoes what the run wrote', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      permissionMode: 'auto_edit',
    });
    const file = join(environment.workspace, 'written.txt');
    environment.api.enqueue(
      toolUseReply('Write', { file_path: file, content: 'hello\n' }),
      textReply('slow '.repeat(40), { chunks: 20, delayMs: 60 }),
      textReply('Steer answered.'),
      textReply('Next answered.'),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write it.' }] });
    await waitForEvent(runtime, sessionId, 'run.message_delta', { where: (event) => event.runId === runId });
    await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Steer me.' }], delivery: 'steer' });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
    const checkpoints = (await runtime.readEvents(sessionId)).filter(
      (event) => event.type === 'run.checkpointed' && event.runId === runId,
    );
    expect(checkpoints).toHaveLength(1);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Next.' }] });
    expect((await runtime.waitForRun(next.runId)).outcome).toBe('succeeded');
    expect(existsSync(file)).toBe(true);

    const rewound = await runtime.rewindSession({ sessionId, toRunId: runId, files: true });
    expect(rewound.files?.paths).toEqual([file]);
    expect(existsSync(file)).toBe(false);
  });
});
