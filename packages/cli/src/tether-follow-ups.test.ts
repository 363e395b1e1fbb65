import type { ChildProcess } from 'node:child_process';
import { createTetherClient } from '@tether/client';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { pollFor } from '@tether/provider-claude/test-support';
import { afterEach, describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-follow-ups-');
const served = useTetherServe(fixture);
const { serve } = served;

type Client = ReturnType<typeof createTetherClient>;

// A test that fails half-way leaves no `tether` behind (one still waiting for its daemon, say).
const started = new Set<ChildProcess>();
afterEach(() => {
  for (const child of started) child.kill('SIGKILL');
  started.clear();
});

function tether(args: string[]): {
  finished: Promise<FinishedTether>;
  signal: (name: NodeJS.Signals) => void;
  /** What it wrote on stderr so far. */
  stderr: () => string;
} {
  let stderr = '';
  const { child, finished } = spawnTether(args, {
    cwd: fixture.workspace,
    environment: fixture.environment,
    onStderr: (text) => (stderr += text),
  });
  started.add(child);
  const forget = () => void started.delete(child);
  finished.then(forget, forget);
  return { finished, signal: (name) => child.kill(name), stderr: () => stderr };
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
  return { client, sessionId, first, url };
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
    expect(keptSend.stderr).toContain(`queued (input ${kept.inputId}): it runs after the running turn`);
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

    // A steer waiting for the held run is that run's: counted with it, not as a queued follow-up.
    const steered = await queue(client, sessionId, ['--steer', 'Steer me.']);
    expect(steered.runId).toBe(first.runId);
    const interrupted = await run(['interrupt', sessionId, '--cancel-queued']);
    expect(interrupted.stderr).toBe(`stopping run ${first.runId}; 1 queued follow-up cancelled\n`);
    expect((await steered.finished).code).toBe(130);
    const queuedSend = await cancelledByInterrupt.finished;
    expect(queuedSend.code).toBe(130);
    expect(queuedSend.stderr).toContain('the follow-up was cancelled (interrupted)');
    expect((await client.getSession(sessionId)).queuedInputs).toEqual([]);
    expect(modelSaw('Ctrl-C me.') || modelSaw('Interrupt me.') || modelSaw('Steer me.')).toBe(false);
  });

  it('interrupt without --cancel-queued says the queued follow-up starts next, and it does', async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();
    const next = await queue(client, sessionId, ['--queue', 'Run me next.']);
    fixture.api.enqueue(textReply('Ran next.'));
    const interrupted = await run(['interrupt', sessionId]);
    expect(interrupted.stderr).toBe(
      `stopping run ${first.runId}; 1 queued follow-up starts next (tether cancel-input withdraws it)\n`,
    );
    const sent = await next.finished;
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe('Ran next.\n');
    expect(modelSaw('Run me next.')).toBe(true);
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

  it("a piped --steer leaves the prompts of the run it went into to that run's caller: it denies none of them", async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();
    const steered = await queue(client, sessionId, ['--steer', 'Also say bye.']);
    expect(steered.stderr()).toContain('the prompts of the run this steers into are left to its caller');
    const { lastSeq } = await client.getSession(sessionId);
    // The held call ends; its retry asks to run a command, which waits for an approval.
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo hi > steered.txt', description: 'Write' }),
      textReply('Done.'),
      textReply('Bye.'),
      textReply('More.'),
    );
    fixture.api.releaseHeld();
    const requested = await nextEvent(client, sessionId, 'interaction.requested', lastSeq);
    expect(requested.runId).toBe(first.runId);
    // The send has seen the prompt (it shows it) by the time it says so: a denial of its own would be on its way.
    await pollFor(() => (steered.stderr().includes(requested.interactionRef) ? true : undefined));
    await client.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    const settled = await nextEvent(
      client,
      sessionId,
      'interaction.settled',
      lastSeq,
      (event) => event.interactionRef === requested.interactionRef,
    );
    expect(settled.outcome).toBe('approved');
    const sent = await steered.finished;
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain(`input ${steered.inputId} folded into the running turn`);
  });

  it('Ctrl-C on a --steer already folded in leaves that run to its caller, without saying it stops it', async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();
    const steered = await queue(client, sessionId, ['--steer', 'Also mention bananas.']);
    // The held call ends (its retry is answered); the call carrying the steer is held in turn.
    fixture.api.enqueue(textReply('First done.'), holdReply());
    fixture.api.releaseHeld();
    await nextEvent(client, sessionId, 'input.folded', 0, (event) => event.inputId === steered.inputId);
    steered.signal('SIGINT');
    const sent = await steered.finished;
    expect(sent.code).toBe(130);
    expect(sent.stderr).toContain("■ the steer went into another caller's run: leaving that run to them");
    expect(sent.stderr).not.toContain('stopping the run');
    // That run goes on.
    expect((await client.getSession(sessionId)).activeRunId).toBe(first.runId);
    fixture.api.enqueue(textReply('Bananas.'));
    fixture.api.releaseHeld();
    await nextEvent(client, sessionId, 'run.completed', 0, (event) => event.runId === first.runId);
  });

  it('--steer with nothing running says the prompt runs as a turn of its own', async () => {
    const url = await serve();
    const client = createTetherClient({ url, token: (await run(['token'])).stdout.trim() });
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
    fixture.api.enqueue(textReply('On its own.'));
    const sent = await run(['send', sessionId, '--steer', 'Steer nothing.']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toBe('On its own.\n');
    expect(sent.stderr).toContain('  · nothing was running to steer: it runs as a turn of its own\n');
    expect(sent.stderr).not.toContain('sent into the running turn');
  });

  it('--steer into a running control is refused saying why, and points to --queue rather than to --steer', async () => {
    const url = await serve();
    const client = createTetherClient({ url, token: (await run(['token'])).stdout.trim() });
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
    fixture.api.enqueue(textReply('Hello.'));
    const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say hello.' }] });
    await nextEvent(client, sessionId, 'run.completed', 0, (event) => event.runId === runId);
    // The compaction's model call is held: the control runs until the test releases it.
    fixture.api.setResponder(() => holdReply());
    const control = await client.runControl({ sessionId, name: 'compact' });
    await fixture.api.waitForRequests(1, { kind: 'compaction' });
    await pollFor(() => (fixture.api.heldCount === 1 ? true : undefined));
    const refused = await run(['send', sessionId, '--steer', 'Also this.']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The active run is the compact control, which takes no follow-up while it runs.');
    expect(refused.stderr).toContain(`tether send ${sessionId} --queue "prompt"`);
    expect(refused.stderr).not.toContain('--steer hands it into the running turn');
    fixture.api.setResponder(undefined);
    fixture.api.releaseHeld();
    await nextEvent(client, sessionId, 'run.completed', 0, (event) => event.runId === control.runId);
  });

  it("another caller's steer into the same run is said as theirs, never as this send's own input", async () => {
    const { client, sessionId, first } = await sessionWithHeldRun();
    const steered = await queue(client, sessionId, ['--steer', 'Also mention bananas.']);
    const other = await client.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Someone else steers.' }],
      delivery: 'steer',
    });
    expect(other.runId).toBe(first.runId);
    fixture.api.enqueue(textReply('First done.'), textReply('Both steers answered.'), textReply('More.'));
    fixture.api.releaseHeld();
    const sent = await steered.finished;
    expect(sent.code).toBe(0);
    expect(sent.stderr).toContain(`  · sent into the running turn (input ${steered.inputId})\n`);
    expect(sent.stderr).toContain(`  · input ${steered.inputId} folded into the running turn\n`);
    // The other caller's input is never presented as this command's.
    expect(sent.stderr).not.toContain(`sent into the running turn (input ${other.inputId})`);
    expect(sent.stderr).not.toContain(`input ${other.inputId} folded into the running turn`);
    expect(sent.stderr).toContain(`another caller's input ${other.inputId} was steered into this turn`);
  });
});

describe('tether send and the daemon around it', () => {
  it('a queued send outlives a graceful daemon stop: one line says the daemon is not answering, and once it is back the follow-up was not sent (runtime restarted)', async () => {
    const { client, sessionId, url } = await sessionWithHeldRun();
    const queued = await queue(client, sessionId, ['--queue', 'Queued before the stop.']);
    const stopping = served.child!;
    const exited = new Promise((resolve) => stopping.once('close', resolve));
    stopping.kill('SIGTERM');
    await pollFor(() => (served.output().includes('waiting for active runs to finish') ? true : undefined));
    // The running turn ends within the grace; a follow-up that started would be answered too.
    fixture.api.enqueue(textReply('First done.'), textReply('The follow-up ran.'));
    fixture.api.releaseHeld();
    await exited;
    expect(served.output()).not.toContain('interrupting runs still active');
    await pollFor(() => (queued.stderr().includes('is not answering') ? true : undefined));

    // The same daemon again (same data dir, same address): it cancels what was left queued.
    await serve(['--port', new URL(url).port]);
    const sent = await queued.finished;
    expect(sent.code).toBe(130);
    expect(sent.stdout).toBe('');
    const notices = sent.stderr.match(/the daemon at \S+ is not answering; reconnecting… \(Ctrl-C to stop waiting\)/g);
    expect(notices).toEqual([`the daemon at ${url} is not answering; reconnecting… (Ctrl-C to stop waiting)`]);
    expect(sent.stderr).toContain(`the daemon at ${url} answers again`);
    expect(sent.stderr).toContain(`■ not sent: the follow-up was cancelled (runtime restarted) · session ${sessionId}`);
    expect(modelSaw('Queued before the stop.')).toBe(false);
  });

  it('a run whose daemon was killed and started again on another port follows it there, and ends as that daemon recorded it', async () => {
    const url = await serve();
    fixture.api.enqueue(holdReply());
    const running = tether(['run', 'Take your time.']);
    await fixture.api.waitForRequests(1, { kind: 'turn' });
    const killed = new Promise((resolve) => served.child!.once('close', resolve));
    served.child!.kill('SIGKILL');
    await killed;
    await pollFor(() => (running.stderr().includes('is not answering') ? true : undefined));

    const moved = await serve();
    expect(moved).not.toBe(url);
    const finished = await running.finished;
    expect(finished.stderr).toContain(`the daemon at ${url} is not answering; reconnecting…`);
    expect(finished.stderr).toContain(`■ the daemon answers again, now at ${moved}`);
    expect(finished.stderr).toContain('runtime_restarted');
    expect(finished.code).toBe(1);
  });

  it("a running send shows only its own turn: another caller's follow-ups are not noted, and stdout is the answer unbroken", async () => {
    const url = await serve();
    const client = createTetherClient({ url, token: (await run(['token'])).stdout.trim() });
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
    const answer = 'One two three four five six seven eight.';
    fixture.api.enqueue(textReply(answer, { chunks: 8, delayMs: 200 }));
    const { lastSeq } = await client.getSession(sessionId);
    const sent = tether(['send', sessionId, 'Count for me.']);
    // Mid-answer, another caller queues a follow-up and withdraws it.
    await nextEvent(client, sessionId, 'run.message_delta', lastSeq);
    const other = await client.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'Someone else asks.' }],
      delivery: 'after_turn',
    });
    await client.cancelQueuedInput({ sessionId, inputId: other.inputId! });
    const finished = await sent.finished;
    expect(finished.code).toBe(0);
    expect(finished.stdout).toBe(`${answer}\n`);
    expect(finished.stderr).not.toContain(other.inputId!);
    expect(finished.stderr).toContain('✓ succeeded');
  });

  it('an empty prompt is the one-line usage error tether run gives, for send as for run', async () => {
    const url = await serve();
    const client = createTetherClient({ url, token: (await run(['token'])).stdout.trim() });
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
    for (const args of [
      ['send', sessionId, '--steer', ''],
      ['send', sessionId, '--queue', '  '],
      ['send', sessionId, ''],
      ['run', ''],
    ]) {
      const refused = await run(args);
      expect(refused.code, args.join(' ')).toBe(2);
      expect(refused.stderr, args.join(' ')).toMatch(
        /^tether (send|run): the prompt is empty\. Give the text of the turn, e\.g\. tether (send|run) [^\n]+\.\n$/,
      );
    }
    expect((await client.getSession(sessionId)).lastSeq).toBe(1);
  });
});
