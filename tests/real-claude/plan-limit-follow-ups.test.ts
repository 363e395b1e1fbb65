import { type FakeReply, errorReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import {
  type ClaudeTestEnvironment,
  collectUntil,
  createClaudeTestEnvironment,
  waitForEvent,
  inputLifecycle,
} from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/**
 * The unified rate-limit headers of a subscription account's five-hour window. The CLI (2.1.332)
 * reads them only for a subscription login (CLAUDE_CODE_OAUTH_TOKEN, here against the fake API), and
 * reports them as a rate_limit_event; a 429 it answers at once, without a retry, as usage_limit_reached.
 */
function windowHeaders(status: 'allowed' | 'rejected', resetSeconds: number): Record<string, string> {
  return {
    'anthropic-ratelimit-unified-status': status,
    'anthropic-ratelimit-unified-reset': String(resetSeconds),
    'anthropic-ratelimit-unified-5h-status': status,
    'anthropic-ratelimit-unified-5h-reset': String(resetSeconds),
    'anthropic-ratelimit-unified-5h-utilization': status === 'rejected' ? '1.0' : '0.2',
    'anthropic-ratelimit-unified-representative-claim': 'five_hour',
  };
}

const turnRequests = () => environment.api.requests.filter((request) => request.kind === 'turn');

/**
 * A subscription session whose first run (a Bash call waiting for its approval) has an after_turn
 * follow-up queued behind it; once approved, the next model request is refused by the closed
 * five-hour window until `resetSeconds`, and `after` answers the requests after that.
 */
async function followUpBehindClosedWindow(resetSeconds: number, after: FakeReply[]) {
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
  // Queued while the first run waits for its approval: it would start the moment that run ends.
  const followUp = await runtime.submitTurn({
    sessionId,
    input: [{ type: 'text', text: 'Now mention bananas.' }],
    delivery: 'after_turn',
  });
  environment.api.enqueue(
    errorReply(429, {
      message: 'You have reached your usage limit.',
      headers: windowHeaders('rejected', resetSeconds),
    }),
    ...after,
  );
  await runtime.respondInteraction({
    sessionId,
    interactionRef: requested.interactionRef,
    answer: { decision: 'approve' },
  });
  return { runtime, sessionId, first, followUp, resetIso: new Date(resetSeconds * 1000).toISOString() };
}

describe('follow-ups while the plan limit window is closed (a subscription login, the real binary)', () => {
  it('a run refused by the closed window names its reset; the queued follow-up is held until then, then starts', async () => {
    // The window closes for a moment from the next request on: in whole seconds (the header's unit),
    // a few ahead: the CLI ignores a reset already past, and on a loaded machine the refused request
    // came 3 s after this line.
    const resetSeconds = Math.floor(Date.now() / 1000) + 6;
    const { runtime, sessionId, first, followUp, resetIso } = await followUpBehindClosedWindow(resetSeconds, [
      textReply('Follow-up done.', { headers: windowHeaders('allowed', resetSeconds + 18_000) }),
    ]);

    const refused = await runtime.waitForRun(first.runId);
    expect(refused).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'provider_api_error',
        retryable: true,
        details: { httpStatus: 429, reason: 'plan_limit', resetsAt: resetIso },
      },
    });
    // The message leaves out seconds that are 0 ("14:05 UTC"), as a person writes a time.
    const readableReset = `${resetIso.slice(11, 19).replace(/:00$/, '')} UTC on`;
    expect(refused.error?.message).toContain(`until it resets at ${readableReset}`);
    expect(refused.error?.message).toMatch(/The follow-up queued in this session waits for the reset.*withdraw it/);

    const held = await waitForEvent(runtime, sessionId, 'input.held');
    expect(held).toMatchObject({
      inputId: followUp.inputId,
      runId: followUp.runId,
      until: resetIso,
      reason: 'plan_limit',
    });
    const whileHeld = await runtime.getSession(sessionId);
    expect(whileHeld).toMatchObject({
      state: 'idle',
      limits: {
        windows: expect.arrayContaining([
          expect.objectContaining({ window: 'five_hour', status: 'rejected', resetsAt: resetIso }),
        ]),
      },
      queuedInputs: [
        expect.objectContaining({ inputId: followUp.inputId, held: { until: resetIso, reason: 'plan_limit' } }),
      ],
    });
    // Two model requests so far: the tool call and the refused one; the follow-up did not spend one.
    expect(turnRequests()).toHaveLength(2);

    const started = await waitForEvent(runtime, sessionId, 'input.started');
    expect(Date.parse(started.at)).toBeGreaterThanOrEqual(Date.parse(resetIso));
    expect((await runtime.waitForRun(followUp.runId)).outcome).toBe('succeeded');
    expect(inputLifecycle(await runtime.readEvents(sessionId))).toEqual([
      `run.started ${first.runId}`,
      `input.queued ${followUp.runId}`,
      `run.completed ${first.runId}`,
      `input.held ${followUp.runId}`,
      `input.started ${followUp.runId}`,
      `run.started ${followUp.runId}`,
      `run.completed ${followUp.runId}`,
    ]);
    expect(turnRequests()).toHaveLength(3);
    expect(JSON.stringify(turnRequests()[2]!.body)).toContain('Now mention bananas.');
    expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
  });

  it('an allowed report naming no window (an answer without the unified headers) starts the held follow-up, not the reset hours later', async () => {
    // The window closes for an hour: the follow-up would wait that long by the reset alone.
    const { runtime, sessionId, first, followUp, resetIso } = await followUpBehindClosedWindow(
      Math.floor(Date.now() / 1000) + 3600,
      [],
    );
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
    expect(inputLifecycle(await runtime.readEvents(sessionId))).toEqual([
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
