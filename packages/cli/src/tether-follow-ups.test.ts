import { createTetherClient } from '@tether/client';
import { holdReply, textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { pollFor } from '@tether/provider-claude/test-support';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-follow-ups-');
const { serve } = useTetherServe(fixture);

type Client = ReturnType<typeof createTetherClient>;

function tether(args: string[]): { finished: Promise<FinishedTether>; signal: (name: NodeJS.Signals) => void } {
  const { child, finished } = spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment });
  return { finished, signal: (name) => child.kill(name) };
}

const run = (args: string[]) => tether(args).finished;

/** The first event of `type` after `afterSeq` (matching `where`). */
async function nextEvent<Type extends ProtocolEvent['type']>(
  client: Client,
  sessionId: string,
  type: Type,
  afterSeq: number,
  where: (event: Extract<ProtocolEvent, { type: Type }>) => boolean = () => true,
): Promise<Extract<ProtocolEvent, { type: Type }>> {
  const controller = new AbortController();
  try {
    for await (const event of client.subscribe(sessionId, { afterSeq, signal: controller.signal })) {
      if (event.type === type && where(event as Extract<ProtocolEvent, { type: Type }>))
        return event as Extract<ProtocolEvent, { type: Type }>;
    }
  } finally {
    controller.abort();
  }
  throw new Error(`the stream ended before ${type}`);
}

/** A daemon with a session whose first run is held open by the fake model (released by the test). */
async function sessionWithHeldRun() {
  const url = await serve();
  const client = createTetherClient({ url, token: (await run(['token'])).stdout.trim() });
  const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
  fixture.api.enqueue(holdReply());
  const first = await client.submitTurn({ sessionId, input: [{ type: 'text', text: 'Take your time.' }] });
  await fixture.api.waitForRequests(1, { kind: 'turn' });
  // The stream is held once the fake API registered it: a release before that would miss it.
  await pollFor(() => (fixture.api.heldCount === 1 ? true : undefined));
  return { client, sessionId, first };
}

/** Starts `tether send ARGS` and resolves with the inputId once the daemon recorded it queued. */
async function queue(client: Client, sessionId: string, args: string[]) {
  const { lastSeq } = await client.getSession(sessionId);
  const sent = tether(['send', sessionId, ...args]);
  const queued = await nextEvent(client, sessionId, 'input.queued', lastSeq);
  return { ...sent, inputId: queued.inputId, runId: queued.runId };
}

const modelSaw = (text: string) =>
  fixture.api.requests.some((request) => request.kind === 'turn' && JSON.stringify(request.body).includes(text));

describe('tether send to a running session', () => {
  it('is refused naming --queue and --steer; --queue runs next, cancel-input withdraws; sessions and show list the queue', async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();

    const refused = await run(['send', sessionId, 'Plain send.']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/run_active/);
    expect(refused.stderr).toMatch(/--queue runs it as the next run, --steer hands it into the running turn/);
    expect((await run(['send', sessionId, '--queue', '--steer', 'Both.'])).code).toBe(2);

    const kept = await queue(client, sessionId, ['--queue', 'Now mention bananas.']);
    const dropped = await queue(client, sessionId, ['--queue', '--json', 'Never mind this.']);
    expect(kept.runId).not.toBe(first.runId);

    const listed = await run(['sessions']);
    expect(listed.stdout).toContain('2 inputs queued');
    const shown = await run(['show', sessionId]);
    expect(shown.stdout).toContain(`queued as ${kept.runId}: ${kept.inputId} "Now mention bananas."`);
    const listedJson = JSON.parse((await run(['sessions', '--json'])).stdout) as { queuedInputs: unknown[] }[];
    expect(listedJson[0]!.queuedInputs).toHaveLength(2);

    const withdrew = await run(['cancel-input', sessionId, dropped.inputId, '--json']);
    expect(withdrew.code).toBe(0);
    expect(JSON.parse(withdrew.stdout)).toMatchObject({ type: 'cancel_queued_input', inputId: dropped.inputId });
    const droppedSend = await dropped.finished;
    expect(droppedSend.code).toBe(130);
    const lastLine = JSON.parse(droppedSend.stdout.trim().split('\n').at(-1)!) as ProtocolEvent;
    expect(lastLine).toMatchObject({ type: 'input.cancelled', inputId: dropped.inputId, reason: 'withdrawn' });
    const again = await run(['cancel-input', sessionId, dropped.inputId]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('input_not_queued');

    // The held run ends (its retry is answered), then the queued send runs as its own next run.
    fixture.api.enqueue(textReply('First done.'), textReply('Queued done.'));
    fixture.api.releaseHeld();
    const keptSend = await kept.finished;
    expect(keptSend.code).toBe(0);
    // Only its own run's answer: the run it waited behind is another turn.
    expect(keptSend.stdout).toBe('Queued done.\n');
    expect(keptSend.stderr).toContain(`queued as the next run (input ${kept.inputId}`);
    expect(modelSaw('Now mention bananas.')).toBe(true);
    expect(modelSaw('Never mind this.')).toBe(false);
    const after = await client.getSession(sessionId);
    expect(after.queuedInputs).toEqual([]);
    expect(after.lastRun?.runId).toBe(kept.runId);
    // The account (an API key) has no plan limits, said so; the context is measured after a run.
    await nextEvent(client, sessionId, 'session.context_measured', 0);
    expect((await run(['sessions'])).stdout).toMatch(/ · no plan limits: API key account · context \d+%\n$/);
  });

  it('interrupt --cancel-queued cancels the queue with the run; Ctrl-C on a queued send withdraws only it', async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();
    const withdrawnByCtrlC = await queue(client, sessionId, ['--queue', 'Ctrl-C me.']);
    const cancelledByInterrupt = await queue(client, sessionId, ['--queue', 'Interrupt me.']);

    const { lastSeq } = await client.getSession(sessionId);
    withdrawnByCtrlC.signal('SIGINT');
    const ended = await nextEvent(client, sessionId, 'input.cancelled', lastSeq);
    expect(ended).toMatchObject({ inputId: withdrawnByCtrlC.inputId, reason: 'withdrawn' });
    expect((await withdrawnByCtrlC.finished).code).toBe(130);
    // The run it waited behind goes on.
    expect((await client.getSession(sessionId)).activeRunId).toBe(first.runId);

    const interrupted = await run(['interrupt', sessionId, '--cancel-queued']);
    expect(interrupted.stderr).toContain(`stopping run ${first.runId} and cancelling its queued follow-ups`);
    const queuedSend = await cancelledByInterrupt.finished;
    expect(queuedSend.code).toBe(130);
    expect(queuedSend.stderr).toContain('the follow-up was cancelled (interrupted)');
    expect((await client.getSession(sessionId)).queuedInputs).toEqual([]);
    expect(modelSaw('Ctrl-C me.') || modelSaw('Interrupt me.')).toBe(false);
  });

  it('--steer hands the prompt into the running turn: folded into that run, no run of its own', async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();
    const steered = await queue(client, sessionId, ['--steer', 'Also mention bananas.']);
    expect(steered.runId).toBe(first.runId);
    fixture.api.enqueue(textReply('First done.'), textReply('Bananas too.'));
    fixture.api.releaseHeld();
    const sent = await steered.finished;
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain(`input ${steered.inputId} folded into the running turn`);
    expect(modelSaw('Also mention bananas.')).toBe(true);
    const session = await client.getSession(sessionId);
    expect(session.lastRun?.runId).toBe(first.runId);
    expect(session.queuedInputs).toEqual([]);
  });
});
