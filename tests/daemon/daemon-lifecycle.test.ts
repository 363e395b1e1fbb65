import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { readDaemonInfo } from '@tether/daemon';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { SessionSnapshot, SubmitTurnReceipt } from '@tether/protocol';
import { answerText, processesWithEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import {
  RecordingLogger,
  SocketClient,
  client,
  completes,
  daemonPerTest,
  dataDirOf,
  openEventStream,
  openSession,
  readEventsUntil,
  spawnDaemonChild,
  sseFrames,
} from './daemon-test-helpers.js';

const fixture = daemonPerTest();
const { start } = fixture;
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  child = undefined;
});

/** A daemon whose one run waits on a model that never answers, with its session's event stream open. */
async function heldRun(options: { shutdownGraceMs: number }) {
  const { environment, daemon, api } = await start(options);
  const sessionId = await openSession(api, environment.workspace);
  environment.api.enqueue(holdReply());
  const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
  const { runId } = await api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text: 'Hold on.' }],
  });
  await environment.api.waitForRequests(1, { kind: 'turn' });
  return { environment, daemon, runId, frames };
}

describe('daemon lifecycle', () => {
  it('close() lets a run in flight finish, refuses new work meanwhile, then removes daemon.json', async () => {
    const logger = new RecordingLogger();
    const { environment, daemon, api } = await start({ logger });
    expect(await readDaemonInfo(dataDirOf(environment))).toMatchObject({ url: daemon.url, pid: process.pid });
    const sessionId = await openSession(api, environment.workspace);
    environment.api.enqueue(textReply('Finishing before the daemon stops.', { chunks: 20, delayMs: 30 }));
    const frames = sseFrames((await openEventStream(daemon, sessionId)).body!);
    const socket = await SocketClient.connect(daemon);
    const { runId } = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Take your time.' }],
    });
    await readEventsUntil(frames, (event) => event.type === 'run.message_delta');

    const closing = daemon.close();
    socket.send({
      type: 'command',
      id: 'late',
      command: { type: 'submit_turn', commandId: 'late-turn', sessionId, input: [{ type: 'text', text: 'One more?' }] },
    });
    expect(await socket.waitFor((frame) => frame.id === 'late')).toMatchObject({
      type: 'error',
      error: { code: 'runtime_stopped' },
    });
    // A fork would be a new session the shutdown cuts off as well.
    socket.send({ type: 'command', id: 'fork', command: { type: 'fork_session', commandId: 'late-fork', sessionId } });
    expect(await socket.waitFor((frame) => frame.id === 'fork')).toMatchObject({
      type: 'error',
      error: { code: 'runtime_stopped' },
    });
    // A new connection meanwhile is told the daemon is stopping, not refused as if nobody were there.
    const opened = await api.request('POST', '/v1/commands', {
      body: {
        type: 'open_session',
        commandId: 'late-open',
        workspace: { kind: 'directory', path: environment.workspace },
      },
    });
    expect(opened.status).toBe(503);
    expect(((await opened.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'runtime_stopped',
      message: expect.stringContaining('shutting down'),
    });
    const rest = await readEventsUntil(frames, completes(runId));
    expect(rest.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    await closing;

    expect((await socket.closed).code).toBe(1001);
    expect(existsSync(path.join(dataDirOf(environment), 'daemon.json'))).toBe(false);
    await expect(fetch(`${daemon.url}/health`)).rejects.toThrow();
    // Refusing work while stopping is no failure of the daemon's: logged as a request, not an error.
    expect(logger.lines.filter((line) => line.message === 'request failed')).toEqual([]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ message: 'request', status: 503, errorCode: 'runtime_stopped' }),
    );
  });

  it('close() does not start a turn waiting for a process slot: it ends runtime_stopped at once, never sent to the model', async () => {
    const environment = await fixture.environment();
    const daemon = await fixture.daemonOn(environment, {
      shutdownGraceMs: 60_000,
      providers: [environment.provider({ maxProcesses: 1 })],
    });
    const api = client(daemon);
    const [running, waiting] = await Promise.all([
      openSession(api, environment.workspace),
      openSession(api, environment.workspace),
    ]);
    environment.api.enqueue(textReply('Finishing before the daemon stops.', { chunks: 20, delayMs: 30 }));
    const runningFrames = sseFrames((await openEventStream(daemon, running)).body!);
    const waitingFrames = sseFrames((await openEventStream(daemon, waiting)).body!);
    const first = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId: running,
      input: [{ type: 'text', text: 'Take your time.' }],
    });
    await readEventsUntil(runningFrames, (event) => event.type === 'run.message_delta');
    const second = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId: waiting,
      input: [{ type: 'text', text: 'Next, please.' }],
    });
    await readEventsUntil(waitingFrames, (event) => event.type === 'run.queued');

    const closing = daemon.close();
    const waited = await readEventsUntil(waitingFrames, completes(second.runId));
    expect(waited.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'interrupted',
      error: { code: 'runtime_stopped', details: { reason: 'not_started' } },
    });
    expect(waited.some((event) => event.type === 'session.process_started')).toBe(false);
    // The run in flight still finishes in the grace; the slot it frees starts nothing.
    const ran = await readEventsUntil(runningFrames, completes(first.runId));
    expect(ran.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    await closing;
    const prompts = environment.api.requests.filter((request) => request.kind === 'turn');
    expect(prompts.map((request) => JSON.stringify(request.body))).not.toContainEqual(
      expect.stringContaining('Next, please.'),
    );
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('close() interrupts a run that outlasts the grace period', async () => {
    const { environment, daemon, runId, frames } = await heldRun({ shutdownGraceMs: 200 });
    const closing = daemon.close();
    const events = await readEventsUntil(frames, completes(runId));
    await closing;
    expect(events.filter((event) => event.type === 'run.interrupt_requested')).toHaveLength(1);
    // Said to be the shutdown's doing: a client tells it from an interrupt of its own.
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'interrupted',
      error: { code: 'runtime_stopped' },
    });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('close({force: true}) does not wait for the grace: a run held for ever (its model never answers) ends stopped at once', async () => {
    // The grace would outlast the test: only the force can end the run in time.
    const { environment, daemon, runId, frames } = await heldRun({ shutdownGraceMs: 600_000 });
    const closing = daemon.close({ force: true });
    const events = await readEventsUntil(frames, completes(runId));
    await closing;
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'interrupted',
      error: { code: 'runtime_stopped' },
    });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('after SIGKILL, the run a new daemon fails ends the call that waited for approval, after the approval', async () => {
    const environment = await fixture.environment();
    const first = await spawnDaemonChild(environment);
    child = first.child;
    const firstApi = client(first);
    const sessionId = await openSession(firstApi, environment.workspace);
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo never > never.txt', description: 'Write' }));
    const frames = sseFrames((await openEventStream(first, sessionId)).body!);
    const { runId } = await firstApi.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Write it.' }],
    });
    await readEventsUntil(frames, (event) => event.type === 'interaction.requested');
    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));

    const daemon = await fixture.daemonOn(environment);
    const events = await readEventsUntil(sseFrames((await openEventStream(daemon, sessionId)).body!), completes(runId));
    expect(events.slice(-3)).toMatchObject([
      { type: 'interaction.cancelled', reason: 'runtime_restarted' },
      { type: 'run.tool_activity', status: 'failed', toolName: 'Bash' },
      { type: 'run.completed', outcome: 'failed', error: { code: 'runtime_restarted' } },
    ]);
  });

  it('after SIGKILL, a daemon started on the same data dir fails the run it left (runtime_restarted) and reaps its claude', async () => {
    const environment = await fixture.environment();
    const dataDir = dataDirOf(environment);
    const first = await spawnDaemonChild(environment);
    child = first.child;
    const firstApi = client(first);
    const sessionId = await openSession(firstApi, environment.workspace);
    environment.api.enqueue(holdReply());
    const { runId } = await firstApi.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Never answered.' }],
    });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    expect(processesWithEnvironment('HOME', environment.home).length).toBeGreaterThan(0);

    child.kill('SIGKILL');
    await new Promise((resolve) => child!.once('exit', resolve));
    // The killed daemon could not remove its daemon.json; readDaemonInfo sees its process is gone.
    expect(existsSync(path.join(dataDir, 'daemon.json'))).toBe(true);
    expect(await readDaemonInfo(dataDir)).toBeNull();

    const daemon = await fixture.daemonOn(environment);
    const api = client(daemon);
    expect(daemon.token).toBe(first.token);
    const snapshot = (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
    const events = await readEventsUntil(sseFrames((await openEventStream(daemon, sessionId)).body!), completes(runId));
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
    // The title was stored with the turn; the run's end, recorded by the new daemon, is the last run.
    expect(snapshot).toMatchObject({
      state: 'idle',
      activeRunId: null,
      title: 'Never answered.',
      lastRun: { runId, outcome: 'failed', completedAt: events.at(-1)!.at },
    });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);

    // The session goes on under the new daemon.
    environment.api.enqueue(textReply('Back after the crash.'));
    const next = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Still there?' }],
    });
    const after = await readEventsUntil(
      sseFrames((await openEventStream(daemon, sessionId, { after: events.at(-1)!.seq })).body!),
      completes(next.runId),
    );
    expect(answerText(after)).toBe('Back after the crash.');
    const later = (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;
    expect(later).toMatchObject({ title: 'Never answered.', lastRun: { runId: next.runId, outcome: 'succeeded' } });
  });
});
