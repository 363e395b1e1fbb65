import { holdReply, textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SessionSnapshot, SubmitTurnReceipt } from '@tether/protocol';
import { pollFor } from '@tether/provider-claude/test-support';
import { type ClaudeTestEnvironment, answerText, createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EventFollower,
  type ServedDaemon,
  endTestDaemons,
  replayThrough,
  serveDaemon,
  stopDaemon,
} from '../scale-out/scale-out-helpers.js';
import { openSession } from './daemon-test-helpers.js';
import { TestReceiver } from './notifications-test-receiver.js';

// Follow-ups queued behind a running turn, on real `tether serve` processes over the data dir's SQLite
// and the real claude binary against the fake Anthropic API: what becomes of them when the daemon is
// killed, and when their run is interrupted (docs: issue 19's semantics, "Crash / restart" and
// "interrupt_run"). Everything is observed as a caller does: receipts, the SSE stream, the snapshot,
// and the requests the model received.

let environment: ClaudeTestEnvironment | undefined;
const daemons: ServedDaemon[] = [];
const followers: EventFollower[] = [];
const receivers: TestReceiver[] = [];
afterEach(async () => {
  await endTestDaemons(environment, daemons, followers);
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  environment = undefined;
});

async function serve(made: ClaudeTestEnvironment, args: readonly string[] = []): Promise<ServedDaemon> {
  // The same name is the same data dir: a second daemon of the test takes over the first one's.
  const daemon = await serveDaemon(made, 'sqlite', null, args);
  daemons.push(daemon);
  return daemon;
}

async function follow(daemon: ServedDaemon, sessionId: string, afterSeq = 0): Promise<EventFollower> {
  const follower = await EventFollower.open(daemon, sessionId, afterSeq);
  followers.push(follower);
  return follower;
}

async function snapshotOf(daemon: ServedDaemon, sessionId: string): Promise<SessionSnapshot> {
  return (await (await daemon.api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
}

/** A daemon with a session whose first run waits on a reply the fake model holds open. */
async function sessionWithHeldRun() {
  environment = await createClaudeTestEnvironment();
  const daemon = await serve(environment);
  const sessionId = await openSession(daemon.api, environment.workspace);
  const events = await follow(daemon, sessionId);
  environment.api.enqueue(holdReply());
  const { runId } = await daemon.api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text: 'Take your time.' }],
  });
  await environment.api.waitForRequests(1, { kind: 'turn' });
  await events.waitFor((event) => event.type === 'run.started' && event.runId === runId, 'the held run started');
  return { daemon, sessionId, runId, events, api: environment.api };
}

/** Queues `text` behind the running run (after_turn); resolves once the daemon's stream says it is queued. */
async function queueFollowUp(daemon: ServedDaemon, events: EventFollower, sessionId: string, text: string) {
  const receipt = await daemon.api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text }],
    delivery: 'after_turn',
  });
  expect(receipt.queued).toBe(true);
  expect(receipt.inputId).toMatch(/^inp_/);
  await events.waitFor(
    (event) => event.type === 'input.queued' && event.inputId === receipt.inputId && event.runId === receipt.runId,
    `input.queued of ${text}`,
  );
  return { inputId: receipt.inputId!, runId: receipt.runId, text };
}

const runEnded = (runId: string) => (event: ProtocolEvent) => event.type === 'run.completed' && event.runId === runId;

/** The events of one run, in order. */
const ofRun = (events: readonly ProtocolEvent[], runId: string) =>
  events.filter((event) => 'runId' in event && event.runId === runId);

/** Whether any request the fake model received (any kind, any message of its history) carries `text`. */
const modelSaw = (api: ClaudeTestEnvironment['api'], text: string) =>
  api.requests.some((request) => JSON.stringify(request.body).includes(text));

/** The turn requests whose newest user message carries `text`: each is the model being asked it. */
const turnsAsking = (api: ClaudeTestEnvironment['api'], text: string) =>
  api.requests.filter((request) => request.kind === 'turn' && request.view?.lastUserText.includes(text));

describe('a follow-up queued behind a running turn', () => {
  it('is cancelled (runtime_restarted) when the daemon is killed -9 and another starts on its data dir: never run, the session goes on', async () => {
    const { daemon: killed, sessionId, runId, events, api } = await sessionWithHeldRun();
    const followUp = await queueFollowUp(killed, events, sessionId, 'Queued before the crash.');
    expect(followUp.runId).not.toBe(runId);
    expect((await snapshotOf(killed, sessionId)).queuedInputs).toMatchObject([{ inputId: followUp.inputId }]);
    const claudeOfKilled = killed.claudeProcesses();
    expect(claudeOfKilled.length).toBeGreaterThan(0);

    await stopDaemon(killed, 'SIGKILL');
    const hook = await TestReceiver.start();
    receivers.push(hook);
    const daemon = await serve(environment!, ['--notify', hook.url]);
    // Nothing the killed daemon started outlives the new daemon's start (both carry the data dir's marker).
    expect(daemon.claudeProcesses()).toEqual([]);

    const after = await follow(daemon, sessionId);
    const ended = await after.waitFor(runEnded(runId), 'the interrupted run ended');
    expect(ended).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
    // The new daemon's receiver hears of the run the crash ended, though it ended as the daemon started.
    const failed = await hook.waitFor((notification) => notification.body.kind === 'run_failed');
    expect(failed.raw).toContain(runId);
    const cancelled = await after.waitFor(
      (event) => event.type === 'input.cancelled' && event.inputId === followUp.inputId,
      'the follow-up ended',
    );
    expect(cancelled).toMatchObject({ runId: followUp.runId, reason: 'runtime_restarted' });
    const snapshot = await snapshotOf(daemon, sessionId);
    expect(snapshot).toMatchObject({ state: 'idle', activeRunId: null, queuedInputs: [] });

    // The session goes on: a new turn runs, and the cancelled follow-up is not in what the model sees.
    api.enqueue(textReply('Back after the crash.'));
    const next = await daemon.api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Still there?' }],
    });
    expect(next.queued).toBeUndefined();
    const nextEnded = await after.waitFor(runEnded(next.runId), 'the new turn ended');
    expect(nextEnded).toMatchObject({ outcome: 'succeeded' });
    expect(answerText(ofRun(after.events, next.runId))).toBe('Back after the crash.');

    const log = await replayThrough(daemon, sessionId, nextEnded.seq);
    // Its run never started: its run id appears only on its queueing and its cancellation.
    expect(ofRun(log, followUp.runId).map((event) => event.type)).toEqual(['input.queued', 'input.cancelled']);
    expect(modelSaw(api, 'Queued before the crash.')).toBe(false);
    expect(turnsAsking(api, 'Still there?')).toHaveLength(1);
  });

  it('stays queued through a graceful stop (SIGTERM): the running turn finishes, no follow-up starts or reaches the model; the next start cancels each runtime_restarted', async () => {
    const { daemon: stopped, sessionId, runId, events, api } = await sessionWithHeldRun();
    const followUps = [];
    for (const text of ['First queued before the stop.', 'Second queued before the stop.', 'Third one too.'])
      followUps.push(await queueFollowUp(stopped, events, sessionId, text));

    const exited = new Promise((resolve) => stopped.child.once('close', resolve));
    stopped.child.kill('SIGTERM');
    await pollFor(() => (stopped.output().includes('waiting for active runs to finish') ? true : undefined));
    // The running turn gets its answer within the grace (its held request's retry is answered). A
    // follow-up that started would be answered at once too, and so be seen.
    api.enqueue(textReply('Finished within the grace.'), ...followUps.map((_, i) => textReply(`Answer ${i + 1}.`)));
    api.releaseHeld();
    await exited;
    expect(await events.waitFor(runEnded(runId), 'the running turn ended')).toMatchObject({ outcome: 'succeeded' });
    expect(answerText(ofRun(events.events, runId))).toBe('Finished within the grace.');
    // From the stop on nothing queued started, and nothing was interrupted for being "still active".
    expect(events.events.filter((event) => event.type.startsWith('input.') && event.type !== 'input.queued')).toEqual(
      [],
    );
    expect(events.events.filter((event) => event.type === 'run.started').map((event) => event.runId)).toEqual([runId]);
    expect(stopped.output()).not.toContain('interrupting runs still active');
    for (const followUp of followUps) expect(modelSaw(api, followUp.text)).toBe(false);

    // The next start ends each of them the one documented way.
    const daemon = await serve(environment!);
    const after = await follow(daemon, sessionId);
    for (const followUp of followUps) {
      const cancelled = await after.waitFor(
        (event) => event.type === 'input.cancelled' && event.inputId === followUp.inputId,
        `${followUp.text} ended`,
      );
      expect(cancelled).toMatchObject({ runId: followUp.runId, reason: 'runtime_restarted' });
      expect(ofRun(after.events, followUp.runId).map((event) => event.type)).toEqual([
        'input.queued',
        'input.cancelled',
      ]);
    }
    expect(await snapshotOf(daemon, sessionId)).toMatchObject({ state: 'idle', activeRunId: null, queuedInputs: [] });
    for (const followUp of followUps) expect(modelSaw(api, followUp.text)).toBe(false);
  });

  it('interrupted with cancelQueued true: each queued follow-up ends cancelled (interrupted) and never reaches the model', async () => {
    const { daemon, sessionId, runId, events, api } = await sessionWithHeldRun();
    const first = await queueFollowUp(daemon, events, sessionId, 'First follow-up, to be dropped.');
    const second = await queueFollowUp(daemon, events, sessionId, 'Second follow-up, to be dropped.');

    const receipt = await daemon.api.command({ type: 'interrupt_run', sessionId, cancelQueued: true });
    expect(receipt).toMatchObject({ type: 'interrupt_run', runId });
    const ended = await events.waitFor(runEnded(runId), 'the interrupted run ended');
    expect(ended).toMatchObject({ outcome: 'interrupted' });
    for (const followUp of [first, second]) {
      const cancelled = await events.waitFor(
        (event) => event.type === 'input.cancelled' && event.inputId === followUp.inputId,
        `${followUp.text} ended`,
      );
      expect(cancelled).toMatchObject({ runId: followUp.runId, reason: 'interrupted' });
    }
    expect((await snapshotOf(daemon, sessionId)).queuedInputs).toEqual([]);

    // The session is idle, not running a follow-up: a new turn starts at once, and ends the log we read.
    api.enqueue(textReply('Fresh start.'));
    const next = await daemon.api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Start again.' }],
    });
    expect(next.queued).toBeUndefined();
    await events.waitFor(runEnded(next.runId), 'the new turn ended');
    for (const followUp of [first, second]) {
      expect(ofRun(events.events, followUp.runId).map((event) => event.type)).toEqual([
        'input.queued',
        'input.cancelled',
      ]);
      expect(modelSaw(api, followUp.text)).toBe(false);
    }
  });

  it('interrupted with cancelQueued false: the queued follow-ups run next, in order, each exactly once', async () => {
    const { daemon, sessionId, runId, events, api } = await sessionWithHeldRun();
    const first = await queueFollowUp(daemon, events, sessionId, 'First follow-up, to be kept.');
    const second = await queueFollowUp(daemon, events, sessionId, 'Second follow-up, to be kept.');
    api.enqueue(textReply('Answer to the first.'), textReply('Answer to the second.'));

    const receipt = await daemon.api.command({ type: 'interrupt_run', sessionId, cancelQueued: false });
    expect(receipt).toMatchObject({ type: 'interrupt_run', runId });
    expect(await events.waitFor(runEnded(runId), 'the interrupted run ended')).toMatchObject({
      outcome: 'interrupted',
    });
    const secondEnded = await events.waitFor(runEnded(second.runId), 'the second follow-up ran');
    expect(secondEnded).toMatchObject({ outcome: 'succeeded' });

    const starts = events.events.filter((event) => event.type === 'input.started' || event.type === 'run.started');
    expect(starts.map((event) => [event.type, event.runId])).toEqual([
      ['run.started', runId],
      ['input.started', first.runId],
      ['run.started', first.runId],
      ['input.started', second.runId],
      ['run.started', second.runId],
    ]);
    expect(events.events.filter((event) => event.type === 'input.cancelled')).toEqual([]);
    expect(events.events.find(runEnded(first.runId))).toMatchObject({ outcome: 'succeeded' });
    expect(answerText(ofRun(events.events, first.runId))).toBe('Answer to the first.');
    expect(answerText(ofRun(events.events, second.runId))).toBe('Answer to the second.');

    // The model was asked each once, the first before the second.
    const asked = api.requests.filter((request) => request.kind === 'turn');
    const firstAsked = turnsAsking(api, first.text);
    const secondAsked = turnsAsking(api, second.text);
    expect(firstAsked).toHaveLength(1);
    expect(secondAsked).toHaveLength(1);
    expect(asked.indexOf(firstAsked[0]!)).toBeLessThan(asked.indexOf(secondAsked[0]!));
    expect(await snapshotOf(daemon, sessionId)).toMatchObject({ queuedInputs: [], lastRun: { runId: second.runId } });
  });
});
