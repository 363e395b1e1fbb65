import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { AgentError } from '@tether/protocol';
import { openSqliteStore } from '@tether/store-sqlite';
import { type ClaudeTestEnvironment, answerText, createClaudeTestEnvironment, processesWithEnvironment, runEvents } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

const tetherBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/cli/bin/tether.js');

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  for (const pid of processesWithEnvironment('HOME', environment.home)) process.kill(pid, 'SIGKILL');
  await environment?.cleanup();
});

function history(index: number): string {
  const turns = environment.api.requests.filter((request) => request.kind === 'turn');
  return JSON.stringify((turns[index]!.body as { messages: unknown }).messages);
}

async function waitForExit(pid: number): Promise<void> {
  // A process we signalled: poll its /proc entry until it is gone (zombies count as dead).
  for (;;) {
    if (processesWithEnvironment('HOME', environment.home).every((candidate) => candidate !== pid)) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('sessions survive process ends and runtime restarts', () => {
  it('continues a conversation in a new runtime on the same data dir, with its events and usage', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(textReply('Stored: PAPAYA.', { usage: { inputTokens: 100, outputTokens: 10 } }), textReply('It was PAPAYA.', { usage: { inputTokens: 100, outputTokens: 10 } }));

    const first = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const { sessionId } = await first.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const one = await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember PAPAYA.' }] });
    const firstRun = await first.waitForRun(one.runId);
    await first.shutdown();

    const second = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const snapshot = await second.getSession(sessionId);
    expect(snapshot).toMatchObject({ state: 'idle', usage: { inputTokens: 100, outputTokens: 10 } });
    expect(snapshot.providerSessionId).not.toBeNull();
    const two = await second.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    const events = await runEvents(second, sessionId, two.runId);
    expect(answerText(events)).toBe('It was PAPAYA.');
    expect(history(1)).toContain('Remember PAPAYA.');
    expect(history(1)).toContain('Stored: PAPAYA.');

    // Cost is per run, also for the first result of a resumed process (same tokens, same cost).
    const secondRun = await second.getRun(two.runId);
    expect(secondRun.usage?.costUsd).toBeCloseTo(firstRun.usage!.costUsd!, 10);
    expect((await second.getSession(sessionId)).usage.inputTokens).toBe(200);

    const all = await second.readEvents(sessionId);
    expect(all.map((event) => event.seq)).toEqual(all.map((_, index) => index + 1));
    expect(all.filter((event) => event.type === 'run.completed')).toHaveLength(2);
  });

  it('starts a new process with --resume when the old one died between turns', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('Noted: LIME.'), textReply('It was LIME.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const one = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember LIME.' }] });
    await runtime.waitForRun(one.runId);
    const [pid] = processesWithEnvironment('HOME', environment.home);
    expect(pid).toBeDefined();
    process.kill(pid!, 'SIGKILL');
    await waitForExit(pid!);
    const two = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    expect(answerText(await runEvents(runtime, sessionId, two.runId))).toBe('It was LIME.');
    expect(history(1)).toContain('Remember LIME.');
  });

  it('fails a run whose process is killed mid-turn with provider_crashed, then resumes on the next turn', async () => {
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('First answer.'), holdReply(), textReply('After the crash.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'One.' }] })).runId);
    const held = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Two.' }] });
    await environment.api.waitForRequests(2, { kind: 'turn' });
    for (const pid of processesWithEnvironment('HOME', environment.home)) process.kill(pid, 'SIGKILL');
    expect(await runtime.waitForRun(held.runId)).toMatchObject({ outcome: 'failed', error: { code: 'provider_crashed', details: { signal: 'SIGKILL' } } });
    const three = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Three.' }] });
    expect(answerText(await runEvents(runtime, sessionId, three.runId))).toBe('After the crash.');
    expect(history(2)).toContain('One.');
  });

  it('marks a run that was active when its runtime died as failed with runtime_restarted', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(holdReply());
    const child = spawn(process.execPath, [tetherBin, 'run', '--json', '--data-dir', dataDir, '--cwd', environment.workspace, 'Hold this.'], {
      env: { ...environment.environment, TETHER_CLAUDE_PATH: environment.claudePath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));

    const runtime = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const [session] = await runtime.listSessions();
    expect(session).toMatchObject({ state: 'idle', activeRunId: null });
    const completed = (await runtime.readEvents(session!.sessionId)).filter((event) => event.type === 'run.completed');
    expect(completed).toHaveLength(1);
    expect(completed[0]).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
  });

  it('a restarted runtime ends the claude process (and what its tools started) left by a crashed one', async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(toolUseReply('Bash', { command: 'setsid tail -f /dev/null > /dev/null 2>&1 &', description: 'Start a detached process' }), holdReply());
    const child = spawn(process.execPath, [tetherBin, 'run', '--json', '--permission-mode', 'bypass', '--data-dir', dataDir, '--cwd', environment.workspace, 'Start it.'], {
      env: { ...environment.environment, TETHER_CLAUDE_PATH: environment.claudePath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await environment.api.waitForRequests(2, { kind: 'turn' });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
    // The CLI waits on its held API call and the detached tool process lives on: both are orphans now.
    expect(processesWithEnvironment('HOME', environment.home).length).toBeGreaterThanOrEqual(2);

    const runtime = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    const [session] = await runtime.listSessions();
    const events = await runtime.readEvents(session!.sessionId);
    expect(events.find((event) => event.type === 'session.process_stopped')).toMatchObject({ reason: 'restarted' });
    expect(events.filter((event) => event.type === 'run.completed').at(-1)).toMatchObject({ outcome: 'failed', error: { code: 'runtime_restarted' } });
  });

  it('refuses a second owner of a data dir with data_dir_in_use and the owner pid', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    const store = await openSqliteStore({ dataDir });
    try {
      const error = await openSqliteStore({ dataDir }).then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(AgentError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'data_dir_in_use', details: { ownerPid: process.pid } });
    } finally {
      await store.close();
    }
  });

  it('reports a missing binary as provider_unavailable before anything runs', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime({ provider: { claudePath: path.join(environment.home, 'missing-claude') } });
    const error = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toMatchObject({ code: 'provider_unavailable', details: { binaryPath: path.join(environment.home, 'missing-claude') } });
    expect(await runtime.listSessions()).toHaveLength(0);
  });
});
