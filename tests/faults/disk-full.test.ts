import { execFileSync } from 'node:child_process';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Daemon } from '@tether/daemon';
import { type FakeReply, textReply } from '@tether/fake-anthropic-api';
import type { SessionSnapshot } from '@tether/protocol';
import { openSqliteStore } from '@tether/store-sqlite';
import {
  type ClaudeTestEnvironment,
  answerText,
  createClaudeTestEnvironment,
  processesWithEnvironment,
} from '@tether/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { client, commandId, openSession, startTestDaemon } from '../daemon/daemon-test-helpers.js';
import { spawnTetherRun } from '../process-supervision/spawn-tether-run.js';

// A full disk under the data dir, for real: a size-limited tmpfs. Mounting needs root (CI and the
// development machines run as root); without it this test fails and says so, it never passes silently.

let environment: ClaudeTestEnvironment | undefined;
let daemon: Daemon | undefined;
let mountPoint: string | undefined;

// Mounted once, in beforeAll: a mount that fails fails the whole file, with the reason.
beforeAll(async () => {
  mountPoint = await mountSmallFileSystem();
});

afterAll(async () => {
  if (!mountPoint) return;
  execFileSync('umount', [mountPoint]);
  await rmdir(mountPoint);
});

afterEach(async () => {
  await daemon?.close();
  await environment?.cleanup();
  // The next test starts on an empty file system.
  if (mountPoint) await rm(path.join(mountPoint, 'data'), { recursive: true, force: true });
  daemon = undefined;
  environment = undefined;
});

async function mountSmallFileSystem(): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'tether-disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0700', 'tmpfs', directory], { stdio: 'pipe' });
  } catch (error) {
    await rmdir(directory);
    throw new Error(`The disk-full test mounts a 4 MiB tmpfs and needs root (CAP_SYS_ADMIN) for it: ${String(error)}`);
  }
  return directory;
}

/** Writes until the file system refuses with ENOSPC; returns the filler's path. */
function fillUp(directory: string): string {
  const filler = path.join(directory, 'filler');
  const descriptor = openSync(filler, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) writeSync(descriptor, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(descriptor);
  }
  return filler;
}

/**
 * A daemon whose data dir lies on a 4 MiB tmpfs, and a session that has answered one turn
 * ("Committed answer.") before anything goes wrong; `replies` are queued after that answer.
 */
async function sessionOnSmallDisk(...replies: FakeReply[]) {
  if (!mountPoint) throw new Error('beforeAll mounts the small file system');
  const dataDir = path.join(mountPoint, 'data');
  environment = await createClaudeTestEnvironment();
  daemon = await startTestDaemon(environment, { dataDir });
  const api = client(daemon);
  const sessionId = await openSession(api, environment.workspace);
  environment.api.enqueue(textReply('Committed answer.'), ...replies);
  const first = await daemon.runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'One.' }] });
  expect((await daemon.runtime.waitForRun(first.runId)).outcome).toBe('succeeded');
  return { mounted: mountPoint, dataDir, environment, daemon, api, sessionId, first };
}

/** Frees the space, proves the session takes its next turn, stops the daemon and reopens its data dir. */
async function freeSpaceAndReopen(filler: string, running: Daemon, sessionId: string, dataDir: string) {
  await rm(filler);
  const next = await running.runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Three.' }] });
  expect((await running.runtime.waitForRun(next.runId)).outcome).toBe('succeeded');
  await running.close();
  daemon = undefined;
  return openSqliteStore({ dataDir });
}

describe('the data dir runs out of space', () => {
  it('tether run in-process ends the turn failed store_failure and exits 1, saying so, instead of dying silently', async () => {
    if (!mountPoint) throw new Error('beforeAll mounts the small file system');
    const dataDir = path.join(mountPoint, 'data');
    environment = await createClaudeTestEnvironment();
    environment.api.enqueue(textReply('slow '.repeat(40), { chunks: 40, delayMs: 200 }));
    const child = spawnTetherRun(environment, dataDir, ['Talk slowly.']);
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    let stdout = '';
    let stderr = '';
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const filled = new Promise<string>((resolve) => {
      let streaming = false;
      child.stdout!.on('data', (chunk: string) => {
        stdout += chunk;
        if (streaming || !stdout.includes('run.message_delta')) return;
        streaming = true;
        resolve(fillUp(mountPoint!));
      });
    });
    const filler = await filled;
    const code = await exited;
    await rm(filler);
    expect(code, stderr).toBe(1);
    // With --json the failure is one JSON line on stderr, its code stable.
    expect(JSON.parse(stderr.trim().split('\n').at(-1)!)).toMatchObject({
      error: {
        code: 'store_failure',
        message: expect.stringContaining('Check the data directory (disk space, permissions)'),
      },
    });
    expect(stderr).not.toContain('unsettled top-level await');
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('refuses a turn with store_failure and writes nothing, the daemon stays up, committed history survives, and the session goes on once there is space', async () => {
    const {
      mounted,
      dataDir,
      environment: current,
      daemon: running,
      api,
      sessionId,
      first,
    } = await sessionOnSmallDisk(textReply('After the disk was freed.'));
    const before = (await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()) as SessionSnapshot;

    const filler = fillUp(mounted);
    const refused = await api.request('POST', '/v1/commands', {
      body: { type: 'submit_turn', commandId: commandId(), sessionId, input: [{ type: 'text', text: 'Two.' }] },
    });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toMatchObject({ error: { code: 'store_failure', retryable: true } });
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
    // Nothing of the refused turn, in memory or on disk: the session is as it was.
    expect(await (await api.request('GET', `/v1/sessions/${sessionId}`)).json()).toEqual(before);
    expect(current.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);

    const store = await freeSpaceAndReopen(filler, running, sessionId, dataDir);
    expect(processesWithEnvironment('HOME', current.home)).toEqual([]);
    try {
      const events = await store.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
      expect(answerText(events)).toBe('Committed answer.After the disk was freed.');
      expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
      expect(await store.getRun(first.runId)).toMatchObject({ status: 'completed', outcome: 'succeeded' });
    } finally {
      await store.close();
    }
  });

  it('fails a run with store_failure when its output cannot be stored: the agent is stopped, the daemon stays up, and once there is space the run ends in the store, once, and the session goes on', async () => {
    const {
      mounted,
      dataDir,
      environment: current,
      daemon: running,
      api,
      sessionId,
      first,
    } = await sessionOnSmallDisk(textReply('Lost answer.', { delayMs: 800 }), textReply('Next.'));
    // The run is recorded (its receipt is back); everything it produces from now on cannot be.
    const second = await running.runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Two.' }] });
    // The store checkpoints its log once it rests, which frees the log's space but its header and one
    // page (the primer written at rest): the disk is filled after that (the reply is held back 800 ms
    // an event), so nothing can make room for the output.
    const log = path.join(dataDir, 'tether.db-wal');
    await vi.waitFor(() => expect(statSync(log).size).toBe(32 + 24 + 4096), { timeout: 5_000, interval: 10 });
    const filler = fillUp(mounted);
    // Its end is stored at once if the store still finds room for that one small write; while it
    // cannot, waiting for the run says store_failure instead of waiting for ever.
    const ended = await running.runtime.waitForRun(second.runId, { signal: AbortSignal.timeout(6_000) }).then(
      (run) => run.error,
      (error: unknown) => error,
    );
    expect(ended).toMatchObject({ code: 'store_failure' });
    // The agent was stopped before the run was given up: nothing works on it unobserved.
    expect(processesWithEnvironment('HOME', current.home)).toEqual([]);
    expect((await fetch(`${running.url}/health`)).status).toBe(200);
    const refused = await api.request('POST', '/v1/commands', {
      body: { type: 'submit_turn', commandId: commandId(), sessionId, input: [{ type: 'text', text: 'Again.' }] },
    });
    expect(refused.status).toBe(500);
    expect(await refused.json()).toMatchObject({ error: { code: 'store_failure', retryable: true } });

    const store = await freeSpaceAndReopen(filler, running, sessionId, dataDir);
    try {
      expect(await store.getRun(second.runId)).toMatchObject({
        status: 'completed',
        outcome: 'failed',
        error: { code: 'store_failure', details: { reason: 'output_not_stored' } },
      });
      expect(await store.getRun(first.runId)).toMatchObject({ status: 'completed', outcome: 'succeeded' });
      const events = await store.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
      expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
      // Nothing of the failed run's output was stored, and it has exactly one end.
      expect(
        events.filter((event) => 'runId' in event && event.runId === second.runId).map((event) => event.type),
      ).toEqual(['run.started', 'run.completed']);
      const started = events.filter((event) => event.type === 'run.started').map((event) => event.runId);
      expect(events.filter((event) => event.type === 'run.completed').map((event) => event.runId)).toEqual(started);
      expect(started).toHaveLength(3);
    } finally {
      await store.close();
    }
  });
});
