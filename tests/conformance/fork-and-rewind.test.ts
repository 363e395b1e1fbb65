import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, agentErrorOf } from '@tether/testkit';
import { afterEach, expect, it } from 'vitest';
import { describeTransports, turnRequests } from './conformance-harness.js';
import { type ProviderConversation, openProviderConversation } from './provider-conversation.js';

/**
 * Conversation copies (what fork_session and rewind_session hand the provider as copyConversation)
 * and file rewind, driven on the provider itself: the runtime decides where to cut, the provider
 * must make the copy and put the files back. Observed through what the model is sent and the files.
 */

/** What the history the model was sent with `prompt` (its turn's first request) holds and lacks. */
function expectHistory(
  environment: ClaudeTestEnvironment,
  prompt: string,
  expected: { readonly holds: readonly string[]; readonly lacks: readonly string[] },
): void {
  const request = turnRequests(environment).find((candidate) => candidate.view?.lastUserText.includes(prompt));
  if (!request) throw new Error(`The model was never asked "${prompt}".`);
  const history = JSON.stringify((request.body as { messages: unknown }).messages);
  for (const text of expected.holds) expect(history).toContain(text);
  for (const text of expected.lacks) expect(history).not.toContain(text);
}

function writeReply(file: string, content: string) {
  return toolUseReply('Write', { file_path: file, content });
}

describeTransports('conversation copies and file rewind', ({ start }) => {
  const opened: ProviderConversation[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((conversation) => conversation.session.doStop('close')));
  });
  async function open(
    environment: ClaudeTestEnvironment,
    options: Parameters<typeof openProviderConversation>[1] = {},
  ): Promise<ProviderConversation> {
    const conversation = await openProviderConversation(environment, options);
    opened.push(conversation);
    return conversation;
  }

  it('a fork at a run carries the history up to that run and not after; the original continues on its own', async () => {
    const environment = await start();
    expect(environment.provider().capabilities).toMatchObject({ fork: true, rewind: true, rewindFiles: true });
    environment.api.enqueue(
      textReply('Reply apple.'),
      textReply('Reply banana.'),
      textReply('Reply cherry.'),
      textReply('Reply date.'),
      textReply('Reply elderberry.'),
    );
    const original = await open(environment);
    const apple = await original.turn('Prompt apple.');
    await original.turn('Prompt banana.');
    expect(apple.checkpoint).toEqual({
      type: 'run.checkpointed',
      runId: apple.completion.runId,
      providerSessionId: original.providerSessionId(),
      inputMessageId: expect.any(String),
      lastMessageId: expect.any(String),
    });

    const fork = await open(environment, {
      copyConversation: {
        providerSessionId: apple.checkpoint!.providerSessionId,
        afterMessageId: apple.checkpoint!.lastMessageId,
      },
    });
    const cherry = await fork.turn('Prompt cherry.');
    expect(cherry.completion.outcome).toBe('succeeded');
    expectHistory(environment, 'Prompt cherry.', {
      holds: ['Prompt apple.', 'Reply apple.'],
      lacks: ['Prompt banana.', 'Reply banana.'],
    });
    // A conversation of its own: a new id, reported once, named by its checkpoints.
    expect(fork.providerSessionId()).toEqual(expect.any(String));
    expect(fork.providerSessionId()).not.toBe(original.providerSessionId());
    expect(cherry.checkpoint?.providerSessionId).toBe(fork.providerSessionId());
    expect(fork.parts.filter((part) => part.type === 'session.provider_session_changed')).toHaveLength(1);

    await original.turn('Prompt date.');
    expectHistory(environment, 'Prompt date.', { holds: ['Prompt banana.'], lacks: ['Prompt cherry.'] });

    // Once the copy exists it is resumed like any conversation (the runtime passes its reported id).
    await fork.session.doStop('release');
    const reopened = await open(environment, { resumeProviderSessionId: fork.providerSessionId()! });
    await reopened.turn('Prompt elderberry.');
    expectHistory(environment, 'Prompt elderberry.', {
      holds: ['Prompt apple.', 'Prompt cherry.'],
      lacks: ['Prompt banana.', 'Prompt date.'],
    });
  });

  it('a fork at an interrupted run keeps the interruption: the model is told the answer was cut short', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('word '.repeat(200), { chunks: 100, delayMs: 50 }));
    const original = await open(environment);
    const { runId, ended } = await original.start('Prompt talk slowly.');
    await original.next('run.message_delta');
    expect(await original.session.doInterrupt({ runId })).toEqual({ applied: true });
    const stopped = await ended;
    expect(stopped.completion.outcome).toBe('interrupted');
    expect(stopped.checkpoint?.lastMessageId).toEqual(expect.any(String));

    environment.api.enqueue(textReply('Reply fig.'));
    const fork = await open(environment, {
      copyConversation: {
        providerSessionId: stopped.checkpoint!.providerSessionId,
        afterMessageId: stopped.checkpoint!.lastMessageId,
      },
    });
    await fork.turn('Prompt fig.');
    expectHistory(environment, 'Prompt fig.', {
      holds: ['Prompt talk slowly.', 'word word', '[Request interrupted by user]'],
      lacks: [],
    });
  });

  it('rewind: files written by later turns are put back (a file they created is gone), and a copy cut before them no longer has them', async () => {
    const environment = await start();
    const edited = path.join(environment.workspace, 'edited.txt');
    const created = path.join(environment.workspace, 'created.txt');
    writeFileSync(edited, 'version zero');
    environment.api.enqueue(
      writeReply(edited, 'version one'),
      textReply('Wrote one.'),
      writeReply(edited, 'version two'),
      writeReply(created, 'created by two'),
      textReply('Wrote two.'),
      textReply('Reply three.'),
    );
    const original = await open(environment, { configuration: { permissionMode: 'auto_edit' } });
    const one = await original.turn('Prompt one.');
    const two = await original.turn('Prompt two.');
    expect(readFileSync(edited, 'utf8')).toBe('version two');
    expect(readFileSync(created, 'utf8')).toBe('created by two');

    const preview = await original.session.doRewindFiles!({
      inputMessageId: two.checkpoint!.inputMessageId!,
      dryRun: true,
    });
    expect(preview).toMatchObject({ canRewind: true, insertions: expect.any(Number), deletions: expect.any(Number) });
    expect([...preview.paths].sort()).toEqual([created, edited]);
    expect(readFileSync(edited, 'utf8')).toBe('version two');

    const rewound = await original.session.doRewindFiles!({
      inputMessageId: two.checkpoint!.inputMessageId!,
      dryRun: false,
    });
    expect(rewound).toEqual(preview);
    expect(readFileSync(edited, 'utf8')).toBe('version one');
    expect(existsSync(created)).toBe(false);

    // The conversation moves as rewind_session moves it: the agent goes, a copy cut after turn one takes over.
    await original.session.doStop('release');
    const copy = await open(environment, {
      configuration: { permissionMode: 'auto_edit' },
      copyConversation: {
        providerSessionId: one.checkpoint!.providerSessionId,
        afterMessageId: one.checkpoint!.lastMessageId,
      },
    });
    await copy.turn('Prompt three.');
    expectHistory(environment, 'Prompt three.', {
      holds: ['Prompt one.', 'Wrote one.'],
      lacks: ['Prompt two.', 'Wrote two.'],
    });
    // File checkpoints of the conversation it was copied from still work in the copy's agent.
    await copy.session.doRewindFiles!({ inputMessageId: one.checkpoint!.inputMessageId!, dryRun: false });
    expect(readFileSync(edited, 'utf8')).toBe('version zero');
  });

  it('says what it cannot do: no checkpoint for an unknown message, a turn in progress, a cut point the conversation does not have', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('Reply one.'), holdReply());
    const original = await open(environment);
    const one = await original.turn('Prompt one.');
    expect(
      await original.session.doRewindFiles!({ inputMessageId: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', dryRun: true }),
    ).toEqual({
      canRewind: false,
      reason: 'no_checkpoint',
      message: expect.any(String),
      paths: [],
      insertions: 0,
      deletions: 0,
    });

    const copy = await open(environment, {
      copyConversation: {
        providerSessionId: one.checkpoint!.providerSessionId,
        afterMessageId: '0f6a3a9e-5b7c-4e0f-9a51-6f3c2d1e8b70',
      },
    });
    const refused = await copy.turn('Prompt from nowhere.');
    expect(refused.completion).toMatchObject({
      outcome: 'failed',
      error: { code: 'resume_not_found', details: { reason: 'no_message' } },
    });
    expect(refused.checkpoint).toBeUndefined();

    // The held turn is ended by the session's close (afterEach), as the runtime ends it.
    await original.start('Prompt held.');
    await environment.api.waitForRequests(2, { kind: 'turn' });
    const error = await agentErrorOf(
      original.session.doRewindFiles!({ inputMessageId: one.checkpoint!.inputMessageId!, dryRun: true }),
    );
    expect(error.code).toBe('run_active');
  });

  it('with fileCheckpointing false the agent keeps no checkpoints: checkpointing_off, and nothing changes', async () => {
    const environment = await start();
    const edited = path.join(environment.workspace, 'edited.txt');
    writeFileSync(edited, 'version zero');
    environment.api.enqueue(writeReply(edited, 'version one'), textReply('Wrote one.'));
    const original = await open(environment, {
      configuration: { permissionMode: 'auto_edit', fileCheckpointing: false },
    });
    const one = await original.turn('Prompt one.');
    expect(readFileSync(edited, 'utf8')).toBe('version one');
    for (const dryRun of [true, false])
      expect(
        await original.session.doRewindFiles!({ inputMessageId: one.checkpoint!.inputMessageId!, dryRun }),
      ).toMatchObject({ canRewind: false, reason: 'checkpointing_off', paths: [] });
    expect(readFileSync(edited, 'utf8')).toBe('version one');
  });
});
