import { getEventListeners } from 'node:events';
import type { ClaudeProviderSettings } from '@tether/provider-claude';
import type { AgentRuntime } from '@tether/runtime';
import {
  type ScriptedQueryContext,
  type ScriptedQueryControls,
  agentErrorOf,
  runEvents,
  scriptedAgentSdkQuery,
  scriptedTurnFrames,
  waitForEvent,
} from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { invokedToken, neutralSequence, returnedToken, runSequence } from '../conformance/conformance-harness.js';
import { useFakeRuntime } from '../fake-cli/fake-runtime-harness.js';

// The sdk transport driven by a deterministic query() (the typed injection seam): what the real
// SDK and binary will not do on demand (prompts taken back at a chosen moment, streams that end
// or throw mid-turn, receipts of older CLIs, producers that never stamp, missing controls).

const harness = useFakeRuntime('tether-fake-sdk-');

type Turn = (context: ScriptedQueryContext, uuid: string, index: number) => void | Promise<void>;

/** A script that answers each user line with `turn`. */
function eachTurn(turn: Turn) {
  return async (context: ScriptedQueryContext) => {
    for (let index = 0; ; index += 1) {
      const message = await context.nextInput();
      if (!message) return context.end();
      await turn(context, message.uuid, index);
    }
  };
}

async function open(
  script: (context: ScriptedQueryContext) => void | Promise<void>,
  options: { controls?: ScriptedQueryControls; provider?: ClaudeProviderSettings } = {},
) {
  const scripted = scriptedAgentSdkQuery(script, options.controls);
  const environment = { PATH: '/usr/bin:/bin', HOME: harness.root, IS_SANDBOX: '1' };
  const { runtime, sessionId } = await harness.start({
    transport: 'sdk',
    query: scripted.query,
    environment,
    ...options.provider,
  });
  return { runtime, sessionId, queries: scripted.queries };
}

async function turn(current: AgentRuntime, sessionId: string, text = 'hello') {
  const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  return { runId, events: await runEvents(current, sessionId, runId) };
}

const started = (uuid: string, sessionId?: string) =>
  scriptedTurnFrames(uuid, '', sessionId ? { sessionId } : {}).slice(0, 2);
const result = (uuid: string) => scriptedTurnFrames(uuid, '').at(-1)!;
const toolUse = (id: string) => ({
  type: 'assistant',
  parent_tool_use_id: null,
  message: { id: 'msg_tool', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } }] },
});
const toolResult = (id: string, isError = false) => ({
  type: 'user',
  parent_tool_use_id: null,
  message: { content: [{ type: 'tool_result', tool_use_id: id, is_error: isError, content: 'out' }] },
});

describe('the sdk transport over an injected query()', () => {
  it('one query per agent: successive turns continue it, frames become the neutral events, options mirror the cli launch', async () => {
    const {
      runtime: current,
      sessionId,
      queries,
    } = await open(
      eachTurn((context, uuid, index) =>
        scriptedTurnFrames(uuid, `reply ${index}`, { sessionId: context.conversationId }).forEach((frame) =>
          context.emit(frame),
        ),
      ),
    );
    await turn(current, sessionId);
    const second = await turn(current, sessionId);
    expect(queries).toHaveLength(1);
    expect(runSequence(second.events, second.runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    // No process of its own: nothing to record for supervision.
    expect(neutralSequence(await current.readEvents(sessionId)).slice(0, 5)).toEqual([
      'session.opened',
      'run.started',
      'session.mode_changed:ask_before_edit:provider',
      'session.model_changed:claude-scripted:provider',
      'session.provider_session_changed',
    ]);
    const options = queries[0]!.options;
    expect(options).toMatchObject({
      cwd: harness.root,
      includePartialMessages: true,
      systemPrompt: { type: 'preset', preset: 'claude_code' },
      sessionId: (await current.getSession(sessionId)).providerSessionId,
      enableFileCheckpointing: true,
    });
    // The child's environment is built exactly as for the cli transport: the host's variables plus the protocol floor.
    expect(options.env).toEqual({
      PATH: '/usr/bin:/bin',
      HOME: harness.root,
      IS_SANDBOX: '1',
      TERM: 'dumb',
      CI: 'true',
      CLAUDE_CODE_STARTUP_FAILURE_RESULTS: '1',
      CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: 'true',
    });
  });

  it('splits text longer than 100,000 characters into deltas', async () => {
    const huge = 'x'.repeat(250_001);
    const { runtime: current, sessionId } = await open(
      eachTurn((context, uuid) => scriptedTurnFrames(uuid, huge).forEach((frame) => context.emit(frame))),
    );
    const { events } = await turn(current, sessionId);
    expect(
      events
        .filter((event) => event.type === 'run.message_delta')
        .map((event) => (event as { text: string }).text.length),
    ).toEqual([100_000, 100_000, 50_001]);
  });

  it("canUseTool: raised after its tool_use frame, answered once with the cli transport's payload", async () => {
    const answers: unknown[] = [];
    const { runtime: current, sessionId } = await open(
      eachTurn(async (context, uuid) => {
        started(uuid).forEach((frame) => context.emit(frame));
        context.emit(toolUse('toolu_1'));
        // The SDK calls canUseTool before our reader has the tool_use frame: it is raised after it anyway.
        answers.push(await context.ask('Bash', { command: 'ls' }, { toolUseId: 'toolu_1', requestId: 'r1' }).answer);
        context.emit(toolResult('toolu_1'));
        context.emit(result(uuid));
      }),
    );
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const requested = await waitForEvent(current, sessionId, 'interaction.requested');
    expect(requested.request).toMatchObject({
      kind: 'approval',
      toolName: 'Bash',
      toolUseId: 'toolu_1',
      input: { command: 'ls' },
    });
    await current.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve', updatedInput: { command: 'ls -a' } },
    });
    const events = await runEvents(current, sessionId, runId);
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      invokedToken('Bash', { command: 'ls' }),
      'interaction.requested:approval:Bash',
      'interaction.settled:approved:host',
      returnedToken('succeeded', 'Bash', 'out'),
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(answers).toEqual([{ behavior: 'allow', updatedInput: { command: 'ls -a' }, toolUseID: 'toolu_1' }]);
  });

  it("the SDK aborting a prompt's signal: withdrawn, denied once, listener detached; a late answer is refused; one already aborted raises nothing", async () => {
    let abortFirst!: () => void;
    const aborted = new Promise<void>((resolve) => {
      abortFirst = resolve;
    });
    const seen: { answer: unknown; listeners: number }[] = [];
    const { runtime: current, sessionId } = await open(
      eachTurn(async (context, uuid) => {
        started(uuid).forEach((frame) => context.emit(frame));
        context.emit(toolUse('toolu_1'));
        const first = context.ask('Bash', { command: 'ls' }, { toolUseId: 'toolu_1', requestId: 'r1' });
        await aborted;
        first.abort();
        seen.push({ answer: await first.answer, listeners: getEventListeners(first.signal, 'abort').length });
        context.emit(toolUse('toolu_2'));
        const second = context.ask(
          'Bash',
          { command: 'pwd' },
          { toolUseId: 'toolu_2', requestId: 'r2', aborted: true },
        );
        seen.push({ answer: await second.answer, listeners: getEventListeners(second.signal, 'abort').length });
        context.emit(result(uuid));
      }),
    );
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const requested = await waitForEvent(current, sessionId, 'interaction.requested');
    abortFirst();
    await waitForEvent(current, sessionId, 'interaction.withdrawn');
    const late = await agentErrorOf(
      current.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve' },
      }),
    );
    expect(late.code).toBe('interaction_already_settled');
    const events = await runEvents(current, sessionId, runId);
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      invokedToken('Bash', { command: 'ls' }),
      'interaction.requested:approval:Bash',
      'interaction.withdrawn',
      invokedToken('Bash', { command: 'ls' }),
      'run.usage',
      'run.checkpointed',
      // Neither call got a result: the run's end ends them.
      'run.tool_activity:failed:Bash',
      'run.tool_activity:failed:Bash',
      'run.completed:succeeded:end_turn',
    ]);
    expect(seen).toEqual([
      { answer: { behavior: 'deny', message: expect.stringContaining('withdrawn') }, listeners: 0 },
      { answer: { behavior: 'deny', message: expect.stringContaining('withdrawn') }, listeners: 0 },
    ]);
  });

  it('denies what is still asked when its run ends, and when the session closes', async () => {
    const answers: unknown[] = [];
    const { runtime: current, sessionId } = await open(
      eachTurn(async (context, uuid, index) => {
        started(uuid).forEach((frame) => context.emit(frame));
        context.emit(toolUse(`toolu_${index}`));
        const prompt = context.ask('Bash', { command: 'ls' }, { toolUseId: `toolu_${index}`, requestId: `r${index}` });
        if (index === 0) context.emit(result(uuid));
        answers.push(await prompt.answer);
      }),
    );
    const first = await turn(current, sessionId);
    expect(first.events.slice(-3)).toMatchObject([
      { type: 'interaction.cancelled', reason: 'run_ended' },
      { type: 'run.tool_activity', status: 'failed', toolUseId: 'toolu_0' },
      { type: 'run.completed' },
    ]);
    await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    await waitForEvent(current, sessionId, 'interaction.requested', { afterSeq: first.events.at(-1)!.seq });
    await current.closeSession({ sessionId });
    await expect.poll(() => answers.length).toBe(2);
    expect(answers).toEqual([
      { behavior: 'deny', message: expect.stringContaining('has ended') },
      { behavior: 'deny', message: expect.stringContaining('closing') },
    ]);
  });

  it('a stream that ends without a result: provider_contract_violation; one that throws: provider_unavailable, no SDK prose; the next turn works, in a conversation of its own', async () => {
    const {
      runtime: current,
      sessionId,
      queries,
    } = await open(async (context) => {
      const message = await context.nextInput();
      started(message!.uuid, context.conversationId).forEach((frame) => context.emit(frame));
      if (queries.length === 1) context.end();
      else if (queries.length === 2) context.fail('Claude Code process exited: secret details');
      else
        scriptedTurnFrames(message!.uuid, 'back', { sessionId: context.conversationId }).forEach((frame) =>
          context.emit(frame),
        );
    });
    expect((await turn(current, sessionId)).events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'provider_contract_violation', details: { reason: 'output_ended_without_result' } },
    });
    const thrown = (await turn(current, sessionId)).events.at(-1);
    expect(thrown).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'provider_unavailable', retryable: true, details: { reason: 'stream_failed' } },
    });
    expect(JSON.stringify(await current.readEvents(sessionId))).not.toContain('secret details');
    expect((await turn(current, sessionId)).events.at(-1)).toMatchObject({ outcome: 'succeeded' });
    // No agent finished a turn of its conversation, so none may have been written down to resume:
    // each new agent starts anew, under a new id (a resume finding nothing would fail every later turn).
    expect(queries[1]!.options.resume).toBeUndefined();
    expect(queries[1]!.options.sessionId).not.toBe(queries[0]!.options.sessionId);
    expect(await current.readEvents(sessionId)).toContainEqual(
      expect.objectContaining({ type: 'diagnostic', code: 'claude.conversation_not_kept' }),
    );
  });

  it('interrupt(): no cancel_queued, so the older receipt rules apply: a started input still queued is provider_rejected, a retry stops it', async () => {
    let context!: ScriptedQueryContext;
    let uuid = '';
    const receipts = [() => ({ still_queued: [uuid] }), () => ({ still_queued: [] })];
    const {
      runtime: current,
      sessionId,
      queries,
    } = await open(
      eachTurn((scriptContext, stamp) => {
        context = scriptContext;
        uuid = stamp;
        started(stamp).forEach((frame) => scriptContext.emit(frame));
      }),
      {
        controls: {
          interrupt: async () => {
            const receipt = receipts.shift()!();
            if (receipts.length === 0)
              context.emit({
                ...result(uuid),
                subtype: 'error_during_execution',
                is_error: true,
                terminal_reason: 'aborted_streaming',
              });
            return receipt;
          },
        },
      },
    );
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await waitForEvent(current, sessionId, 'session.provider_session_changed');
    expect(await agentErrorOf(current.interruptRun({ sessionId }))).toMatchObject({
      code: 'provider_rejected',
      details: { reason: 'input_still_queued' },
    });
    await current.interruptRun({ sessionId });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    expect(queries[0]!.calls.interrupts).toBe(2);
  });

  it("interrupt(): a later turn's input not started yet and still queued will run, so the stop is refused; once it runs a retry stops it", async () => {
    let context!: ScriptedQueryContext;
    let uuid = '';
    let release!: () => void;
    const {
      runtime: current,
      sessionId,
      queries,
    } = await open(
      eachTurn(async (scriptContext, stamp, index) => {
        context = scriptContext;
        uuid = stamp;
        if (index === 0) return scriptedTurnFrames(stamp, 'first').forEach((frame) => scriptContext.emit(frame));
        // The second input waits behind earlier work: nothing names it until it is let go.
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        // Started, and streaming: everything of the turn but its result.
        scriptedTurnFrames(stamp, 'working')
          .slice(0, -1)
          .forEach((frame) => scriptContext.emit(frame));
      }),
      {
        controls: {
          interrupt: async () => {
            if (queries[0]!.calls.interrupts === 1) return { still_queued: [uuid] };
            context.emit({
              ...result(uuid),
              subtype: 'error_during_execution',
              is_error: true,
              terminal_reason: 'aborted_streaming',
            });
            return { still_queued: [] };
          },
        },
      },
    );
    expect((await turn(current, sessionId)).events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'succeeded',
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'second' }] });
    await waitForEvent(current, sessionId, 'run.started', {
      afterSeq: (await current.getSession(sessionId)).lastSeq - 1,
    });
    expect(await agentErrorOf(current.interruptRun({ sessionId }))).toMatchObject({
      code: 'provider_rejected',
      details: { reason: 'input_still_queued' },
    });
    expect((await current.getSession(sessionId)).activeRunId).toBe(runId);
    release();
    await waitForEvent(current, sessionId, 'run.message_delta', { where: (event) => event.runId === runId });
    await current.interruptRun({ sessionId });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    expect(queries[0]!.calls.interrupts).toBe(2);
  });

  it('controls: set_model resolved from the initialize answer, a refusal by error code only, a missing method unsupported, no cost request', async () => {
    const refusal = Object.assign(new Error('Mode refused: long SDK prose'), { errorCode: 'invalid_mode' });
    const { runtime: current, sessionId } = await open(
      eachTurn((context, uuid) => scriptedTurnFrames(uuid, 'ok').forEach((frame) => context.emit(frame))),
      {
        controls: {
          initializationResult: async () => ({
            models: [{ value: 'sonnet', resolvedModel: 'claude-sonnet-scripted' }],
          }),
          setPermissionMode: () => Promise.reject(refusal),
          getContextUsage: null,
        },
      },
    );
    await turn(current, sessionId);
    expect(
      (await current.dispatch({ type: 'set_model', commandId: 'model-1', sessionId, model: 'sonnet' })).model,
    ).toBe('claude-sonnet-scripted');
    expect(
      (await current.dispatch({ type: 'set_model', commandId: 'model-2', sessionId, model: 'claude-custom-1' })).model,
    ).toBe('claude-custom-1');
    const refused = await agentErrorOf(current.setPermissionMode({ sessionId, mode: 'plan' }));
    expect(refused).toMatchObject({ code: 'provider_execution_error', details: { reason: 'invalid_mode' } });
    expect(refused.message).not.toContain('prose');
    expect(
      await agentErrorOf(current.dispatch({ type: 'get_context_usage', commandId: 'usage-1', sessionId })),
    ).toMatchObject({ code: 'capability_unsupported', details: { reason: 'context_usage' } });
    expect(
      await agentErrorOf(current.dispatch({ type: 'get_session_cost', commandId: 'cost-1', sessionId })),
    ).toMatchObject({ code: 'capability_unsupported', details: { reason: 'session_cost' } });
  });
});

describe('start-up watchdog', () => {
  it('a query that never yields a frame fails the run provider_stalled (phase startup) and is closed; the next turn gets a new one', async () => {
    let queriesStarted = 0;
    const {
      runtime: current,
      sessionId,
      queries,
    } = await open(
      async (context) => {
        queriesStarted += 1;
        // The first agent takes its input and says nothing; the next one answers.
        if (queriesStarted === 1) return void (await context.nextInput());
        await eachTurn((inner, uuid) =>
          scriptedTurnFrames(uuid, 'awake', { sessionId: inner.conversationId }).forEach((frame) => inner.emit(frame)),
        )(context);
      },
      { provider: { startupTimeoutMs: 300 } },
    );
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    expect(await current.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_stalled', details: { phase: 'startup' } },
    });
    expect(queries[0]!.calls.closed).toBe(true);
    const next = await turn(current, sessionId);
    expect(runSequence(next.events, next.runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(queries).toHaveLength(2);
  });
});

describe('correlation with a producer that never stamps', () => {
  const unstamped = eachTurn((context, uuid) =>
    scriptedTurnFrames(uuid, 'unstamped reply', { stamped: false }).forEach((frame) => context.emit(frame)),
  );

  it('stamped (default): its frames are not attributed to our run; the run fails provider_contract_violation naming the fix instead of hanging', async () => {
    const { runtime: current, sessionId } = await open(unstamped);
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const run = await current.waitForRun(runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_contract_violation', details: { reason: 'frames_unstamped' } },
    });
    expect(run.error?.message).toContain('legacy-unstamped');
    const events = await current.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'diagnostic' && event.code === 'claude.frames_unstamped')).toEqual([
      expect.objectContaining({ level: 'warning', runId }),
    ]);
    expect(events.some((event) => event.type === 'run.message_delta')).toBe(false);
  });

  it('legacy-unstamped: attribution by position, until the first stamp ends the declaration', async () => {
    const { runtime: current, sessionId } = await open(
      eachTurn((context, uuid, index) =>
        scriptedTurnFrames(uuid, `reply ${index}`, { stamped: index > 0 }).forEach((frame) => context.emit(frame)),
      ),
      { provider: { correlation: 'legacy-unstamped' } },
    );
    const first = await turn(current, sessionId);
    expect(runSequence(first.events, first.runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    const second = await turn(current, sessionId);
    expect(runSequence(second.events, second.runId)).toEqual([
      'run.started',
      'diagnostic:debug:claude.correlation_stamped',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
  });
});
