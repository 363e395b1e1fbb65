import { errorReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { type ClaudeTestEnvironment, collectUntil, createClaudeTestEnvironment, waitForEvent } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/** A subscription account's five-hour window closed until `resetSeconds`, as the unified rate-limit headers say it. */
function rejectedWindow(resetSeconds: number): Record<string, string> {
  return {
    'anthropic-ratelimit-unified-status': 'rejected',
    'anthropic-ratelimit-unified-reset': String(resetSeconds),
    'anthropic-ratelimit-unified-5h-status': 'rejected',
    'anthropic-ratelimit-unified-5h-reset': String(resetSeconds),
    'anthropic-ratelimit-unified-5h-utilization': '1.0',
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
  };
}

const lifecycle = (events: readonly ProtocolEvent[]) =>
  events
    .filter(
      (event) => event.type.startsWith('input.') || event.type === 'run.started' || event.type === 'run.completed',
    )
    .map((event) => `${event.type} ${'runId' in event ? event.runId : ''}`);

const turnRequests = () => environment.api.requests.filter((request) => request.kind === 'turn');

describe('follow-ups held by the plan limit, released by a report that the limit is no longer reached (the real binary)', () => {
  it('an allowed report naming no window (an answer without the unified headers) starts the held follow-up, not the reset hours later', async () => {
    environment = await createClaudeTestEnvironment();
    const { ANTHROPIC_API_KEY: _key, ...withoutKey } = environment.environment;
    const runtime = await environment.runtime({
      provider: {
        environment: { ...withoutKey, CLAUDE_CODE_OAUTH_TOKEN: 'sk-ant-oat01-tether-test' },
        keepInheritedOAuthToken: true,
      },
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo hi > hi.txt', description: 'Write a file' }));
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say hi with Bash.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    const followUp = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Now mention bananas.' }],
      delivery: 'after_turn',
    });
    // The window closes for an hour: the follow-up would wait that long by the reset alone.
    const resetSeconds = Math.floor(Date.now() / 1000) + 3600;
    const resetIso = new Date(resetSeconds * 1000).toISOString();
    environment.api.enqueue(
      errorReply(429, { message: 'You have reached your usage limit.', headers: rejectedWindow(resetSeconds) }),
    );
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    expect((await runtime.waitForRun(first.runId)).error).toMatchObject({ details: { reason: 'plan_limit' } });
    await waitForEvent(runtime, sessionId, 'input.held', { where: (event) => event.until === resetIso });

    // The host's own turn runs now (held follow-ups do not keep it waiting), and the API lets it
    // through: the CLI reports {status: 'allowed'} with no window type for an answer without the headers.
    environment.api.enqueue(textReply('Host turn done.'), textReply('Follow-up done.'));
    const hostTurn = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Are you there?' }] });
    expect((await runtime.waitForRun(hostTurn.runId)).outcome).toBe('succeeded');
    // The five-hour window keeps its last report; the account's own came after it.
    expect((await runtime.getSession(sessionId)).limits?.windows).toEqual([
      { window: 'five_hour', status: 'rejected', usedPercent: null, resetsAt: resetIso },
      { window: 'unified', status: 'allowed', usedPercent: null, resetsAt: null },
    ]);
    // What follows the host run's end: the follow-up starts (before the fix: held again until the reset).
    const completed = (await runtime.readEvents(sessionId)).find(
      (event) => event.type === 'run.completed' && event.runId === hostTurn.runId,
    )!;
    const after = await collectUntil(
      runtime,
      sessionId,
      (event) => event.type === 'input.started' || event.type === 'input.held',
      { afterSeq: completed.seq },
    );
    expect(after.at(-1)).toMatchObject({ type: 'input.started', inputId: followUp.inputId });
    expect((await runtime.waitForRun(followUp.runId)).outcome).toBe('succeeded');
    expect(lifecycle(await runtime.readEvents(sessionId))).toEqual([
      `run.started ${first.runId}`,
      `input.queued ${followUp.runId}`,
      `run.completed ${first.runId}`,
      `input.held ${followUp.runId}`,
      `run.started ${hostTurn.runId}`,
      `run.completed ${hostTurn.runId}`,
      `input.started ${followUp.runId}`,
      `run.started ${followUp.runId}`,
      `run.completed ${followUp.runId}`,
    ]);
    expect(JSON.stringify(turnRequests().at(-1)!.body)).toContain('Now mention bananas.');
  });
});
