import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { createTetherClient } from '@tether/client';
import type { Daemon, DaemonLogger } from '@tether/daemon';
import type { ProtocolEvent, SubmitTurnReceipt } from '@tether/protocol';
import { type RecordedLogLine, recordingLogger, useTestPostgres } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { client, openSession } from '../daemon/daemon-test-helpers.js';
import { InProcessDaemons } from './in-process-daemons.js';

// Daemons in this process on one real PostgreSQL, their agents mocked (the test emits their output):
// what /health, /v1/metrics and the log say, and what is kept, while the database is down.
const server = useTestPostgres();

const daemons = new InProcessDaemons();
const { turns } = daemons;
let root = '';
afterEach(async () => {
  await daemons.closeAll();
});

const isBackgroundFailure = (line: RecordedLogLine) =>
  line.level === 'error' && line.message?.startsWith('background work failed');

function serve(
  database: string,
  name: string,
  logger: DaemonLogger,
  options: { leaseTtlMs?: number; shutdownGraceMs?: number } = {},
): Promise<Daemon> {
  return daemons.serve({ root, database, name, logger, ...options });
}

async function workspace(): Promise<string> {
  root = await daemons.temporaryRoot('tether-outage-');
  const directory = path.join(root, 'workspace');
  await mkdir(directory);
  return directory;
}

async function health(daemon: Daemon): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${daemon.url}/health`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The samples of one metric in a daemon's scrape: labels as text → value. */
async function samples(daemon: Daemon, metric: string): Promise<Record<string, number>> {
  const text = await (await client(daemon).request('GET', '/v1/metrics')).text();
  const found: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = new RegExp(`^${metric}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (match) found[match[1] ?? ''] = Number(match[2]);
  }
  return found;
}

/** Closes the daemon while the server is down (once its /health says so): 'closed', or why the close failed. */
async function closedWhileDown(daemon: Daemon): Promise<unknown> {
  let closed: unknown = 'not yet';
  await server().restart({
    whileStopped: async () => {
      await expect.poll(async () => (await health(daemon)).status, { timeout: 10_000, interval: 50 }).toBe(503);
      closed = await daemon.close().then(
        () => 'closed',
        (error: unknown) => error,
      );
    },
  });
  return closed;
}

/** A session of the daemon's with a turn held running (its agent mocked). */
async function heldTurn(daemon: Daemon, directory: string): Promise<{ sessionId: string; runId: string }> {
  const api = client(daemon);
  const sessionId = await openSession(api, directory);
  const { runId } = await api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: [{ type: 'text', text: 'held' }],
  });
  await expect.poll(() => turns.length, { timeout: 5_000, interval: 20 }).toBe(1);
  return { sessionId, runId };
}

/** A daemon started next on the database ends the run its stopped predecessor left (once the lease lapses). */
async function expectEndedByNextDaemon(database: string, sessionId: string, runId: string): Promise<void> {
  const later = await serve(database, 'b', recordingLogger().logger);
  const completion = async () =>
    (await later.runtime.readEvents(sessionId, { afterSeq: 0, limit: 1_000 })).find(
      (event) => event.type === 'run.completed',
    );
  await expect.poll(completion, { timeout: 30_000, interval: 100 }).toMatchObject({
    runId,
    outcome: 'failed',
    error: { code: 'runtime_restarted' },
  });
}

describe('daemons on a PostgreSQL database that goes down', () => {
  it('answer /health 503 with the store error while it is down, log the sweep failure with its reason, and 200 again once it is back', async () => {
    await workspace();
    const database = await server().createDatabase();
    const { logger, lines } = recordingLogger();
    const daemon = await serve(database, 'a', logger);
    expect(await health(daemon)).toEqual({ status: 200, body: { ok: true, version: expect.any(String) } });
    const password = new URL(database).password;

    let down: { status: number; body: Record<string, unknown> } | undefined;
    let healthOfClient: unknown;
    await server().restart({
      whileStopped: async () => {
        await expect.poll(async () => (await health(daemon)).status, { timeout: 10_000, interval: 50 }).toBe(503);
        down = await health(daemon);
        healthOfClient = await createTetherClient({ url: daemon.url, token: daemon.token }).health();
        // The lease sweep gives up after the store's retry bound (about 10 s), and says why.
        await expect
          .poll(() => lines.filter(isBackgroundFailure), { timeout: 30_000, interval: 100 })
          .not.toHaveLength(0);
      },
    });
    expect(down).toEqual({
      status: 503,
      body: {
        ok: false,
        version: expect.any(String),
        store: {
          kind: 'postgres',
          reason: 'store_unreachable',
          cause: 'ECONNREFUSED',
          message: expect.stringContaining('start the PostgreSQL server'),
          since: expect.any(String),
        },
      },
    });
    // A local command reads it as a daemon that is there, of its version, and unhealthy.
    expect(healthOfClient).toMatchObject({ ok: false, version: down?.body['version'], store: { kind: 'postgres' } });
    const [failure] = lines.filter(isBackgroundFailure);
    expect(failure?.fields).toMatchObject({
      errorCode: 'store_failure',
      reason: 'store_unreachable',
      cause: 'ECONNREFUSED',
    });
    expect(failure?.message).toContain('start the PostgreSQL server');
    expect(JSON.stringify([down, lines])).not.toContain(password);
    // Every probe answered 503, and none is logged as a failed request: the store's line says why, once.
    const probes = lines.filter((line) => line.fields['route'] === '/health' && line.fields['status'] === 503);
    expect(probes.length).toBeGreaterThan(0);
    expect(probes.filter((line) => line.level === 'error')).toEqual([]);

    await expect.poll(async () => (await health(daemon)).status, { timeout: 15_000, interval: 50 }).toBe(200);
  }, 90_000);

  it('stop while it is down: the close of an idle daemon ends without reading the store, its open session left for the next daemon', async () => {
    const directory = await workspace();
    const database = await server().createDatabase();
    const { logger, lines } = recordingLogger();
    const daemon = await serve(database, 'a', logger, { shutdownGraceMs: 0 });
    const sessionId = await openSession(client(daemon), directory);

    expect(await closedWhileDown(daemon)).toBe('closed');
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    const later = await serve(database, 'b', recordingLogger().logger);
    await expect
      .poll(async () => (await later.runtime.getSession(sessionId)).state, { timeout: 10_000, interval: 100 })
      .toBe('idle');
  }, 90_000);

  it('stop while it is down: the close ends, the turn it ran stopped, and a daemon later ends that run in the store once the database is back', async () => {
    const directory = await workspace();
    const database = await server().createDatabase();
    const { logger, lines } = recordingLogger();
    const daemon = await serve(database, 'a', logger, { shutdownGraceMs: 0 });
    const { sessionId, runId } = await heldTurn(daemon, directory);

    expect(await closedWhileDown(daemon)).toBe('closed');
    expect(turns[0]?.session.interrupts).toEqual([runId]);
    // What it could not write is logged, and its lease lapses: the next daemon ends the run in the store.
    expect(lines.filter(isBackgroundFailure).length).toBeGreaterThan(0);
    await expectEndedByNextDaemon(database, sessionId, runId);
  }, 90_000);

  it('a forced stop while the server hangs mid-statement (stopped, its connections open) still ends: the store stops waiting, says so, and the next daemon ends the run', async () => {
    const directory = await workspace();
    const database = await server().createDatabase();
    const { logger, lines } = recordingLogger();
    const daemon = await serve(database, 'a', logger);
    const { sessionId, runId } = await heldTurn(daemon, directory);

    let closed: unknown = 'not yet';
    await server().hang({
      whileHung: async () => {
        // Without a bound the close waits on statements the server never answers (it did, for ever).
        const waited = new Promise((resolve) => setTimeout(() => resolve('still waiting after 60 s'), 60_000).unref());
        closed = await Promise.race([
          daemon.close({ force: true }).then(
            () => 'closed',
            (error: unknown) => error,
          ),
          waited,
        ]);
      },
    });
    expect(closed).toBe('closed');
    expect(lines.filter(isBackgroundFailure).map((line) => line.fields['reason'])).toContain('store_abandoned');
    await expectEndedByNextDaemon(database, sessionId, runId);
  }, 120_000);

  it("count in tether_sessions each daemon's own open sessions, and the store's sessions once per daemon in tether_store_sessions", async () => {
    const directory = await workspace();
    const database = await server().createDatabase();
    const { logger } = recordingLogger();
    const [a, b, c] = await Promise.all(['a', 'b', 'c'].map((name) => serve(database, name, logger)));
    const [apiA, apiB] = [client(a!), client(b!)];
    await openSession(apiA, directory);
    const closed = await openSession(apiA, directory);
    await apiA.command({ type: 'close_session', sessionId: closed });
    await openSession(apiB, directory);

    const idleOf = async (daemon: Daemon) => (await samples(daemon, 'tether_sessions'))['{state="idle"}'];
    expect(await Promise.all([a!, b!, c!].map(idleOf))).toEqual([1, 1, 0]);
    // Closed sessions are no daemon's: not in tether_sessions, counted in the store's numbers.
    expect(Object.keys(await samples(a!, 'tether_sessions'))).not.toContain('{state="closed"}');
    for (const daemon of [a!, b!, c!])
      expect(await samples(daemon, 'tether_store_sessions')).toMatchObject({
        '{state="idle"}': 2,
        '{state="closed"}': 1,
      });
  });

  it('keep a streaming turn whole through a 16 s outage: its output lands once the database is back, no lease lost', async () => {
    const directory = await workspace();
    const database = await server().createDatabase();
    const { logger, lines } = recordingLogger();
    const daemon = await serve(database, 'a', logger, { leaseTtlMs: 15_000 });
    const api = client(daemon);
    const sessionId = await openSession(api, directory);
    turns.length = 0;
    await api.command({ type: 'submit_turn', sessionId, input: [{ type: 'text', text: 'stream' }] });
    await expect.poll(() => turns.length, { timeout: 5_000, interval: 20 }).toBe(1);
    const turn = turns[0]!;
    const delta = (index: number) =>
      turn.emit({ type: 'run.message_delta', runId: turn.runId, blockId: 'block-1', text: `part ${index} ` });
    delta(0);

    const outageMs = 16_000;
    const started = Date.now();
    await server().restart({
      whileStopped: async () => {
        // One delta a second all through the outage, as a streaming agent would.
        for (let index = 1; Date.now() - started < outageMs; index += 1) {
          delta(index);
          await new Promise((resolve) => setTimeout(resolve, 1_000));
        }
      },
    });
    turn.emit({ type: 'run.completed', runId: turn.runId, outcome: 'succeeded' });
    const stored = (): Promise<ProtocolEvent[]> => daemon.runtime.readEvents(sessionId, { afterSeq: 0, limit: 10_000 });
    await expect
      .poll(async () => (await stored()).some((event) => event.type === 'run.completed'), {
        timeout: 60_000,
        interval: 100,
      })
      .toBe(true);
    const log = await stored();
    expect(log.map((event) => event.seq)).toEqual(log.map((_, index) => index + 1));
    const text = log.flatMap((event) => (event.type === 'run.message_delta' ? [event.text] : [])).join('');
    const emitted = Array.from(
      { length: Number(/part (\d+) $/.exec(text)?.[1] ?? -1) + 1 },
      (_, index) => `part ${index} `,
    );
    expect(text).toBe(emitted.join(''));
    expect(emitted.length).toBeGreaterThanOrEqual(16);
    expect(log.filter((event) => event.type === 'run.completed')).toMatchObject([{ outcome: 'succeeded' }]);
    // No lease lost: the session stayed this daemon's (a sweep that gave up meanwhile is only logged).
    expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(outageMs);
  }, 120_000);
});
