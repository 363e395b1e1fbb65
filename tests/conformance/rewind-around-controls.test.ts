import { textReply } from '@tether/fake-anthropic-api';
import { succeededTurn } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, history, turnRequests } from './conformance-harness.js';

/**
 * A control that calls the model (/review) records no checkpoint (checkpoint.ts): a rewind cuts past it
 * at the turn before, as for any control, and is never taken for a turn an older Tether stored unmarked.
 */
describeTransports('a rewind past a control the model answered', ({ start }) => {
  it('is made at the last turn before it: the next turn holds that turn and not the one rewound', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Noted.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const turn = (text: string) => succeededTurn(runtime, sessionId, text);
    await turn('Prompt apple.');
    const review = await runtime.runControl({ sessionId, name: 'review' });
    const reviewed = await runtime.waitForRun(review.runId);
    // What makes it a case: answered by the model (tokens out), and no checkpoint.
    expect(reviewed).toMatchObject({ outcome: 'succeeded', checkpoint: null });
    expect(reviewed.usage?.outputTokens).toBeGreaterThan(0);
    const banana = await turn('Prompt banana.');

    await runtime.rewindSession({ sessionId, toRunId: banana });
    await turn('Prompt cherry.');
    const last = history(environment, turnRequests(environment).length - 1);
    expect(last).toContain('Prompt apple.');
    expect(last).not.toContain('Prompt banana.');
  });
});
