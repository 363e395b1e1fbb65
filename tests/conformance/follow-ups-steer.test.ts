import { dropConnectionReply, errorReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type ProtocolEvent, newInputId } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { answerText, killProcessesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, neutralSequence, turnRequests } from './conformance-harness.js';
import { conversationsClosedAfterEach } from './provider-conversation.js';

const followUp = 'Also mention bananas.';

/** A run's parts as neutral tokens, a steered input's part with its id replaced by its name. */
function runTokens(parts: readonly AgentProviderV1Part[], runId: string, names: Record<string, string>): string[] {
  const tokens = parts
    .filter((part) => 'runId' in part && part.runId === runId)
    .map((part) => {
      if (part.type === 'input.folded') return `input.folded:${names[part.inputId]}`;
      if (part.type === 'input.cancelled') return `input.cancelled:${names[part.inputId]}:${part.reason}`;
      return neutralSequence([part as unknown as ProtocolEvent])[0]!;
    });
  return tokens.filter((token, index) => !(token.endsWith('…') && tokens[index - 1] === token));
}

function steerTokens(parts: readonly AgentProviderV1Part[], runId: string, names: Record<string, string>): string[] {
  return runTokens(parts, runId, names).filter(
    (token) => token.startsWith('input.') || token.startsWith('run.completed'),
  );
}

describeTransports('follow-ups steered into the running turn', ({ start }) => {
  const opening = conversationsClosedAfterEach();

  async function open(options: { sandbox?: boolean } = {}) {
    const environment = await start({ sandbox: options.sandbox ?? false });
    const conversation = await opening(environment, {
      configuration: options.sandbox ? { permissionMode: 'bypass' } : {},
    });
    return { environment, conversation };
  }

  it("while a tool runs: the model's next request carries it beside the tool result, inside the same run", async () => {
    const { environment, conversation } = await open({ sandbox: true });
    const command = { command: 'sleep 2; echo slept', description: 'Sleep' };
    environment.api.enqueue(toolUseReply('Bash', command), textReply('Done with both.'));
    const { runId, ended } = await conversation.start('Run the tool.');
    await conversation.next('run.tool_activity', (part) => part.status === 'invoked');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    const { completion } = await ended;
    expect(completion.outcome).toBe('succeeded');
    expect(steerTokens(conversation.parts, runId, { [inputId]: 'steer' })).toEqual([
      'input.folded:steer',
      'run.completed:succeeded:end_turn',
    ]);
    const requests = turnRequests(environment);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.view!.toolResults.map((result) => result.content)).toEqual(['slept']);
    expect(requests[1]!.view!.lastUserText).toContain(followUp);
    expect(answerText(conversation.parts as unknown as ProtocolEvent[])).toBe('Done with both.');
  });

  it('while text streams: the agent answers it after the text, and the run ends once, after both', async () => {
    const { environment, conversation } = await open();
    environment.api.enqueue(textReply('word '.repeat(40), { chunks: 20, delayMs: 60 }), textReply('Bananas answered.'));
    const { runId, ended } = await conversation.start('Talk slowly.');
    await conversation.next('run.message_delta');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    const { completion } = await ended;
    expect(completion.outcome).toBe('succeeded');
    const tokens = runTokens(conversation.parts, runId, { [inputId]: 'steer' });
    expect(tokens.filter((token) => token.startsWith('run.completed'))).toEqual(['run.completed:succeeded:end_turn']);
    expect(tokens.at(-1)).toBe('run.completed:succeeded:end_turn');
    expect(tokens).toContain('input.folded:steer');
    // One checkpoint, naming the run's own input (the steer's would leave the run's edits on a rewind).
    const checkpoints = conversation.parts.filter((part) => part.type === 'run.checkpointed' && part.runId === runId);
    expect(checkpoints).toHaveLength(1);
    expect(tokens.at(-2)).toMatch(/^run\.checkpointed/);
    // Both answers are the run's: the follow-up's after the text it was sent during.
    expect(answerText(conversation.parts as unknown as ProtocolEvent[])).toBe(`${'word '.repeat(40)}Bananas answered.`);
    const requests = turnRequests(environment);
    expect(requests).toHaveLength(2);
    expect(requests[1]!.view!.lastUserText).toContain(followUp);
  });

  it('a run gone on for a steer whose agent dies mid-answer counts each call once: the result its first turn, the stream the rest', async () => {
    const { environment, conversation } = await open();
    environment.api.enqueue(
      textReply('word '.repeat(40), { chunks: 20, delayMs: 60, usage: { inputTokens: 111, outputTokens: 222 } }),
      textReply('banana '.repeat(400), { chunks: 200, delayMs: 20, usage: { inputTokens: 3000, outputTokens: 900 } }),
    );
    const { runId, ended } = await conversation.start('Talk slowly.');
    await conversation.next('run.message_delta');
    await conversation.session.doSteer!({ runId, inputId: newInputId(), input: [{ type: 'text', text: followUp }] });
    await environment.api.waitForRequests(2, { kind: 'turn' });
    await conversation.next('run.message_delta', (part) => part.text.includes('banana'));
    killProcessesWithEnvironment('HOME', environment.home);
    expect((await ended).completion).toMatchObject({ outcome: 'failed', error: { code: 'provider_crashed' } });
    const usage = conversation.parts.flatMap((part) => (part.type === 'run.usage' ? [part] : []));
    expect(usage.map((part) => part.inputTokens)).toEqual([111, 3000]);
    expect(usage[1]).toMatchObject({ costUsd: null });
  });

  it("a steer does not hide its run's failure: the host's own turn failed, so the run fails, though the steer is answered", async () => {
    const environment = await start({ sandbox: false, maxRetries: 1 });
    const conversation = await opening(environment, {});
    let first = true;
    environment.api.setResponder((request) => {
      if (request.lastUserText.includes(followUp)) return textReply('Bananas answered.');
      if (!first) return errorReply(500);
      first = false;
      return dropConnectionReply(3, { holdBeforeDrop: true });
    });
    const { runId, ended } = await conversation.start('Talk, then fail.');
    await conversation.next('run.message_delta');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    environment.api.releaseHeld();
    const { completion } = await ended;
    expect(completion).toMatchObject({ outcome: 'failed', error: { code: 'provider_api_error' } });
    expect(answerText(conversation.parts as unknown as ProtocolEvent[])).toContain('Bananas answered.');
  });

  it('sent right after the turn, before the agent said anything: taken into the same run, which ends once', async () => {
    const { environment, conversation } = await open();
    environment.api.setResponder((request) =>
      textReply(request.lastUserText.includes(followUp) ? 'Bananas answered.' : 'First answer.'),
    );
    const { runId, ended } = await conversation.start('Say something.');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    const { completion } = await ended;
    expect(completion.outcome).toBe('succeeded');
    expect(steerTokens(conversation.parts, runId, { [inputId]: 'steer' })).toEqual([
      'input.folded:steer',
      'run.completed:succeeded:end_turn',
    ]);
    expect(answerText(conversation.parts as unknown as ProtocolEvent[])).toContain('Bananas answered.');
    expect(turnRequests(environment).at(-1)!.view!.lastUserText).toContain(followUp);
  });

  it('interrupted with a steer pending: the steer ends cancelled (interrupted) and never reaches the model', async () => {
    const { environment, conversation } = await open();
    environment.api.enqueue(textReply('word '.repeat(200), { chunks: 100, delayMs: 50 }));
    const { runId, ended } = await conversation.start('Talk slowly.');
    await conversation.next('run.message_delta');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    expect(await conversation.session.doInterrupt({ runId })).toEqual({ applied: true });
    const { completion } = await ended;
    expect(completion.outcome).toBe('interrupted');
    expect(steerTokens(conversation.parts, runId, { [inputId]: 'steer' })).toEqual([
      'input.cancelled:steer:interrupted',
      'run.completed:interrupted',
    ]);
    // The next turn is the only one after it, and carries nothing of the steer.
    environment.api.enqueue(textReply('Back again.'));
    await conversation.turn('Are you there?');
    const requests = turnRequests(environment);
    expect(requests).toHaveLength(2);
    expect(JSON.stringify(requests.map((request) => request.body))).not.toContain(followUp);
  });

  it('a tool prompt denied with a stop while a steer is pending: the steer ends cancelled (interrupted), the run interrupted, no further model call', async () => {
    const { environment, conversation } = await open();
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo x > steered.txt', description: 'Write' }));
    environment.api.setResponder(() => textReply('Went on.'));
    const { runId, ended } = await conversation.start('Run the tool.');
    const requested = await conversation.next('interaction.requested');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    await conversation.session.doRespond({
      interactionRef: requested.interactionRef,
      answer: { decision: 'deny', interrupt: true },
    });
    const { completion } = await ended;
    // Before: the CLI ran the steer right after the aborted tool, in the same turn, and the run succeeded.
    expect(completion.outcome).toBe('interrupted');
    expect(steerTokens(conversation.parts, runId, { [inputId]: 'steer' })).toEqual([
      'input.cancelled:steer:interrupted',
      'run.completed:interrupted',
    ]);
    expect(turnRequests(environment)).toHaveLength(1);
  });

  it('kept from the model by the spent budget: cancelled (agent_refused), not folded; the run fails budget_exceeded', async () => {
    const environment = await start({ sandbox: false });
    // The answer costs ~$0.30 of the $0.05 left, which the CLI finds only after it: the steer's turn is never sent.
    const conversation = await opening(environment, { configuration: { maxCostUsd: 1 }, spentCostUsd: 0.95 });
    environment.api.enqueue(
      textReply('word '.repeat(40), { chunks: 20, delayMs: 60, usage: { inputTokens: 100_000, outputTokens: 10 } }),
    );
    environment.api.setResponder(() => textReply('Answered the steer.'));
    const { runId, ended } = await conversation.start('Talk slowly.');
    await conversation.next('run.message_delta');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    const { completion } = await ended;
    expect(completion).toMatchObject({ outcome: 'failed', error: { code: 'budget_exceeded' } });
    // Before: folded (the CLI had started it), so a host trusting that never sent it again.
    expect(steerTokens(conversation.parts, runId, { [inputId]: 'steer' })[0]).toBe(
      'input.cancelled:steer:agent_refused',
    );
    expect(turnRequests(environment)).toHaveLength(1);
  });

  it('withdrawn before the agent took it: cancelled (withdrawn), the run ends with its own turn only', async () => {
    const { environment, conversation } = await open();
    environment.api.enqueue(textReply('word '.repeat(40), { chunks: 20, delayMs: 60 }));
    const { runId, ended } = await conversation.start('Talk slowly.');
    await conversation.next('run.message_delta');
    const inputId = newInputId();
    await conversation.session.doSteer!({ runId, inputId, input: [{ type: 'text', text: followUp }] });
    expect(await conversation.session.doWithdrawSteer!({ inputId })).toEqual({ withdrawn: true });
    const { completion } = await ended;
    expect(completion.outcome).toBe('succeeded');
    expect(steerTokens(conversation.parts, runId, { [inputId]: 'steer' })).toEqual([
      'input.cancelled:steer:withdrawn',
      'run.completed:succeeded:end_turn',
    ]);
    expect(turnRequests(environment)).toHaveLength(1);
    // Withdrawing again finds nothing to take back.
    expect(await conversation.session.doWithdrawSteer!({ inputId })).toEqual({ withdrawn: false });
  });

  it('refuses a steer into a run that is not in progress (nothing sent)', async () => {
    const { environment, conversation } = await open();
    environment.api.enqueue(textReply('Hello.'));
    const { runId } = await conversation.start('Hi.').then(async ({ runId, ended }) => {
      await ended;
      return { runId };
    });
    const refusal = await conversation.session.doSteer!({
      runId,
      inputId: newInputId(),
      input: [{ type: 'text', text: followUp }],
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toMatchObject({ code: 'provider_rejected', details: { reason: 'run_not_active' } });
    expect(turnRequests(environment)).toHaveLength(1);
  });
});
