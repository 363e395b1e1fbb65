import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, succeededTurn } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { promptsSentWith } from './prompts-sent.js';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/** A session whose compactions the model answers with a summary, and every other turn with "Noted.". */
async function sessionThatCompacts() {
  environment = await createClaudeTestEnvironment({
    responder: (view) =>
      view.isCompaction
        ? textReply('<analysis>Short.</analysis><summary>Summary of the talk so far.</summary>')
        : textReply('Noted.'),
  });
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  return { runtime, sessionId };
}

// A fork of the whole conversation is cut where the source stood when it was forked. When the
// source's last run left no answer to cut after (interrupted before the model said anything), the
// cut is still there: what the source does afterwards, before the fork's agent starts, is not the fork's.
describe('a fork of the whole conversation after a run that left no answer', () => {
  it('holds the source as it stood, the unanswered prompt included, and none of the turns the source ran after the fork', async () => {
    environment = await createClaudeTestEnvironment({
      responder: (view) => (view.lastUserText.trimEnd().endsWith('(held)') ? holdReply() : textReply('Noted.')),
    });
    const runtime = await environment.runtime();
    const turn = async (sessionId: string, text: string) => {
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
      expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
    };
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await turn(sessionId, 'Prompt source-one.');
    const { runId: held } = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Prompt source-unanswered. (held)' }],
    });
    await environment.api.waitForRequests(2, { kind: 'turn' });
    await runtime.interruptRun({ sessionId, runId: held });
    const interrupted = await runtime.waitForRun(held);
    expect(interrupted.outcome).toBe('interrupted');
    // Nothing answered, but the CLI's "[Request interrupted by user]" marker is the run's last entry: a cut point.
    expect(interrupted.checkpoint?.lastMessageId).toEqual(expect.any(String));

    const { forkSessionId } = await runtime.forkSession({ sessionId });
    // The source goes on before the fork's agent starts: that turn is the source's alone.
    await turn(sessionId, 'Prompt source-after-fork.');
    expect(promptsSentWith(environment, 'Prompt source-after-fork.', 'latest')).toEqual([
      'Prompt source-one.',
      'Prompt source-unanswered.',
      'Prompt source-after-fork.',
    ]);
    await turn(forkSessionId, 'Prompt fork-one.');
    expect(promptsSentWith(environment, 'Prompt fork-one.', 'latest')).toEqual([
      'Prompt source-one.',
      'Prompt source-unanswered.',
      'Prompt fork-one.',
    ]);
    // Each goes on with its own history.
    await turn(sessionId, 'Prompt source-later.');
    expect(promptsSentWith(environment, 'Prompt source-later.', 'latest')).not.toContain('Prompt fork-one.');
    await turn(forkSessionId, 'Prompt fork-two.');
    expect(promptsSentWith(environment, 'Prompt fork-two.', 'latest')).toEqual([
      'Prompt source-one.',
      'Prompt source-unanswered.',
      'Prompt fork-one.',
      'Prompt fork-two.',
    ]);
  });

  it.each(['control', 'typed'] as const)(
    "(%s) after a compaction, from the compacted conversation as it stood: its summary, none of the source's later turns",
    async (how) => {
      const { runtime, sessionId } = await sessionThatCompacts();
      const turn = async (session: string, text: string) => {
        const { runId } = await runtime.submitTurn({ sessionId: session, input: [{ type: 'text', text }] });
        expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded', error: null });
      };
      await turn(sessionId, 'Prompt source-one.');
      // Typed as a turn's text, the CLI runs it as it runs the control.
      const { runId: compaction } =
        how === 'control'
          ? await runtime.runControl({ sessionId, name: 'compact' })
          : await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: '/compact' }] });
      // The compaction is the conversation's point to cut at now: what came before it cannot be resumed at.
      expect(await runtime.waitForRun(compaction)).toMatchObject({
        outcome: 'succeeded',
        checkpoint: { lastMessageId: expect.any(String) },
      });
      const { forkSessionId } = await runtime.forkSession({ sessionId });
      // The source goes on before the fork's agent starts: that turn is the source's alone.
      await turn(sessionId, 'Prompt source-after-fork.');
      await turn(forkSessionId, 'Prompt fork-one.');
      const forkHistory = JSON.stringify(
        environment.api.requests.filter((request) => request.kind === 'turn').at(-1)?.body,
      );
      expect(forkHistory).toContain('Summary of the talk so far.');
      expect(forkHistory).toContain('Prompt fork-one.');
      expect(forkHistory).not.toContain('Prompt source-after-fork.');
    },
  );

  it('a rewind to before a turn after a compaction goes back to the compacted conversation, not to before it', async () => {
    const { runtime, sessionId } = await sessionThatCompacts();
    const turn = (text: string) => succeededTurn(runtime, sessionId, text);
    await turn('Prompt source-one.');
    const { runId: compaction } = await runtime.runControl({ sessionId, name: 'compact' });
    expect((await runtime.waitForRun(compaction)).outcome).toBe('succeeded');
    const two = await turn('Prompt source-two.');
    await runtime.rewindSession({ sessionId, toRunId: two });
    await turn('Prompt after-rewind.');
    const history = JSON.stringify(environment.api.requests.filter((request) => request.kind === 'turn').at(-1)?.body);
    expect(history).toContain('Summary of the talk so far.');
    expect(history).toContain('Prompt after-rewind.');
    expect(history).not.toContain('Prompt source-two.');
    expect(history).not.toContain('Prompt source-one.');
  });
});

// Claude Code reads a transcript from its last compaction on: a conversation cut before one cannot
// be resumed (its next turn would fail resume_not_found), so such a cut is refused up front.
describe('a fork or a rewind to before a compaction', () => {
  it('is refused compacted, naming the run; nothing changes, and the session goes on', async () => {
    const { runtime, sessionId } = await sessionThatCompacts();
    const turn = async (session: string, text: string) => {
      const { runId } = await runtime.submitTurn({ sessionId: session, input: [{ type: 'text', text }] });
      expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded', error: null });
      return runId;
    };
    const one = await turn(sessionId, 'Prompt source-one.');
    const two = await turn(sessionId, 'Prompt source-two.');
    const { runId: compaction } = await runtime.runControl({ sessionId, name: 'compact' });
    expect((await runtime.waitForRun(compaction)).outcome).toBe('succeeded');
    const three = await turn(sessionId, 'Prompt source-three.');
    const { lastSeq } = await runtime.getSession(sessionId);

    for (const refused of [
      runtime.rewindSession({ sessionId, toRunId: two }),
      runtime.rewindSession({ sessionId, toRunId: compaction }),
      runtime.forkSession({ sessionId, atRunId: one }),
    ]) {
      await expect(refused).rejects.toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'compacted' } });
    }
    expect((await runtime.getSession(sessionId)).lastSeq).toBe(lastSeq);
    await turn(sessionId, 'Prompt source-four.');

    // At the compaction or after it, both work.
    const { forkSessionId } = await runtime.forkSession({ sessionId, atRunId: compaction });
    await turn(forkSessionId, 'Prompt fork-one.');
    await runtime.rewindSession({ sessionId, toRunId: three });
    await turn(sessionId, 'Prompt after-rewind.');
    const history = JSON.stringify(environment.api.requests.filter((request) => request.kind === 'turn').at(-1)?.body);
    expect(history).toContain('Summary of the talk so far.');
    expect(history).not.toContain('Prompt source-three.');
  });
});

// /clear starts a new, empty conversation under a new id. A copy cut there holds nothing: neither
// what came before the clear nor what the source says after it.
describe('a fork or a rewind after /clear', () => {
  async function clearedSession(how: 'control' | 'typed' = 'control') {
    environment = await createClaudeTestEnvironment({ responder: () => textReply('Noted.') });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const turn = async (session: string, text: string) => {
      const { runId } = await runtime.submitTurn({ sessionId: session, input: [{ type: 'text', text }] });
      expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded', error: null });
      return runId;
    };
    await turn(sessionId, 'Prompt before-clear.');
    // Typed as a turn's text, the CLI runs it as it runs the control.
    const { runId: clear } =
      how === 'control'
        ? await runtime.runControl({ sessionId, name: 'clear' })
        : await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: '/clear' }] });
    expect(await runtime.waitForRun(clear)).toMatchObject({
      outcome: 'succeeded',
      checkpoint: { inputMessageId: null, lastMessageId: null },
    });
    return { runtime, sessionId, clear, turn };
  }

  it('a fork made right after it starts empty, and takes none of the turns the source runs before the fork starts', async () => {
    const { runtime, sessionId, turn } = await clearedSession();
    const { forkSessionId } = await runtime.forkSession({ sessionId });
    await turn(sessionId, 'Prompt source-after-fork.');
    expect(promptsSentWith(environment, 'Prompt source-after-fork.')).toEqual(['Prompt source-after-fork.']);
    await turn(forkSessionId, 'Prompt fork-one.');
    expect(promptsSentWith(environment, 'Prompt fork-one.')).toEqual(['Prompt fork-one.']);
    await turn(forkSessionId, 'Prompt fork-two.');
    expect(promptsSentWith(environment, 'Prompt fork-two.')).toEqual(['Prompt fork-one.', 'Prompt fork-two.']);
  });

  it.each(['control', 'typed'] as const)(
    '(%s) a rewind to before the first turn after it continues from the empty conversation, not from before the clear; files cannot be put back to the clear',
    async (how) => {
      const { runtime, sessionId, clear, turn } = await clearedSession(how);
      const after = await turn(sessionId, 'Prompt after-clear.');
      await runtime.rewindSession({ sessionId, toRunId: after });
      await turn(sessionId, 'Prompt after-rewind.');
      expect(promptsSentWith(environment, 'Prompt after-rewind.')).toEqual(['Prompt after-rewind.']);
      await expect(runtime.rewindSession({ sessionId, toRunId: clear, files: true })).rejects.toMatchObject({
        code: 'checkpoint_unavailable',
        details: { reason: 'no_checkpoint' },
        message: expect.stringContaining('took no input of yours'),
      });
    },
  );
});
