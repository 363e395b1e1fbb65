import { textReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, agentErrorOf, createClaudeTestEnvironment, succeededTurn } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { promptsSentWith } from './prompts-sent.js';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

// Forks through the runtime over the real binary: where each side's conversation is cut, seen in what the model is sent.
describe('forks go on as branches of their own', () => {
  it('a fork of the whole conversation copies it as it stood, and rewound to its first turn it goes back there, not to nothing', async () => {
    environment = await createClaudeTestEnvironment({ responder: () => textReply('Noted.') });
    const runtime = await environment.runtime();
    const turn = async (sessionId: string, text: string) => {
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
      expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
      return runId;
    };
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await turn(sessionId, 'Prompt source-one.');
    const { forkSessionId } = await runtime.forkSession({ sessionId });
    // The source goes on before the fork's agent starts: that turn is the source's alone.
    await turn(sessionId, 'Prompt source-two.');
    const first = await turn(forkSessionId, 'Prompt fork-one.');
    expect(promptsSentWith(environment, 'Prompt fork-one.')).toEqual(['Prompt source-one.', 'Prompt fork-one.']);
    await turn(forkSessionId, 'Prompt fork-two.');

    await runtime.rewindSession({ sessionId: forkSessionId, toRunId: first });
    await turn(forkSessionId, 'Prompt fork-again.');
    expect(promptsSentWith(environment, 'Prompt fork-again.')).toEqual(['Prompt source-one.', 'Prompt fork-again.']);
    await turn(sessionId, 'Prompt source-three.');
    expect(promptsSentWith(environment, 'Prompt source-three.')).toEqual([
      'Prompt source-one.',
      'Prompt source-two.',
      'Prompt source-three.',
    ]);
  });

  it('a file rewind the agent cannot do says why and what to do once, and records no rewind', async () => {
    environment = await createClaudeTestEnvironment({ responder: () => textReply('Noted.') });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const turn = (text: string) => succeededTurn(runtime, sessionId, text);
    const first = await turn('Prompt one.');
    // Rewound to before the first turn, the next one starts a new conversation: the first's checkpoint is not in it.
    await runtime.rewindSession({ sessionId, toRunId: first });
    await turn('Prompt two.');
    const error = await agentErrorOf(runtime.rewindSession({ sessionId, toRunId: first, files: true }));
    expect(error).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(error.message).toMatch(
      /^The agent cannot put the files back for that run: .+[^.]\. Rewind without files, or to another run\.$/,
    );
    expect(error.message.match(/Rewind without files/g)).toHaveLength(1);
    expect((await runtime.readEvents(sessionId)).filter((event) => event.type === 'session.rewound')).toHaveLength(1);
  });
});
