/**
 * Events/second without the CLI: (1) realistic run.message_delta events committed straight
 * through the SQLite store in batches, as the runtime's writer does (events + the session row);
 * (2) a runtime over SQLite with a mock provider emitting the deltas, to one subscriber.
 */
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { newRunId } from '@tether/protocol';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { createMockProvider } from '@tether/testkit';
import { median } from './stats.mjs';

const blockId = 'msg_01BenchBenchBenchBenchBench:0';

function word(index) {
  return `w${String(index + 1).padStart(4, '0')} `;
}

/**
 * A real session row, made by the runtime itself (so the bench follows the record's shape as the
 * product evolves): open a session over a fresh store, shut down, reopen the store, load it.
 */
async function sessionFromRuntime(dataDir, workspace) {
  const runtime = await createAgentRuntime({
    providers: [createMockProvider()],
    store: await openSqliteStore({ dataDir }),
  });
  await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
  await runtime.shutdown();
  const store = await openSqliteStore({ dataDir });
  const [session] = await store.loadSessions();
  return { store, session };
}

/**
 * One commit unit as the runtime's writer stages provider output: `count` message deltas for each
 * write's session, then that session's record (running, at its new lastSeq). Advances each write's
 * lastSeq. A write is { session, runId, lastSeq }.
 */
export function deltaUnit(writes, count) {
  const at = new Date().toISOString();
  const events = [];
  const sessions = [];
  for (const write of writes) {
    const { sessionId } = write.session;
    for (let index = 0; index < count; index += 1) {
      events.push({
        type: 'run.message_delta',
        runId: write.runId,
        blockId,
        text: word(write.lastSeq % 9999),
        sessionId,
        seq: write.lastSeq + 1,
        at,
      });
      write.lastSeq += 1;
    }
    sessions.push({
      ...write.session,
      state: 'running',
      activeRunId: write.runId,
      lastSeq: write.lastSeq,
      updatedAt: at,
    });
  }
  return { events, sessions, runs: [], interactions: [], receipts: [], blobs: [] };
}

/** Commits `deltas` message deltas of one run in batches of `batchSize`, as the writer does; returns events/s. */
async function commitDirect({ store, session, deltas, batchSize }) {
  const write = { session, runId: newRunId(), lastSeq: session.lastSeq };
  const started = performance.now();
  for (let from = 0; from < deltas; from += batchSize)
    await store.commit(deltaUnit([write], Math.min(deltas, from + batchSize) - from));
  session.lastSeq = write.lastSeq;
  return deltas / ((performance.now() - started) / 1000);
}

export async function measureStoreDirect({ deltas = 2000, batchSizes = [1, 50, 100, 200, 2000], rounds = 5 } = {}) {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-store-'));
  await mkdir(path.join(root, 'workspace'));
  const { store, session: loaded } = await sessionFromRuntime(path.join(root, 'data'), path.join(root, 'workspace'));
  const session = { ...loaded };
  try {
    // Warm up the statements and the file.
    await commitDirect({ store, session, deltas: 500, batchSize: 100 });
    const results = [];
    for (const batchSize of batchSizes) {
      const rates = [];
      for (let round = 0; round < rounds; round += 1)
        rates.push(await commitDirect({ store, session, deltas, batchSize }));
      results.push({ batchSize, eventsPerSecond: median(rates), rounds: rates });
    }
    return results;
  } finally {
    await store.close();
    await rm(root, { recursive: true, force: true });
  }
}

/** One turn of `deltas` mock deltas through a fresh runtime over SQLite, to one subscriber. */
async function mockTurn({ root, deltas, perTick }) {
  const dataDir = await mkdtemp(path.join(root, 'data-'));
  const workspace = path.join(root, 'workspace');
  const provider = createMockProvider({
    async turn({ runId, emit }) {
      for (let index = 0; index < deltas; index += 1) {
        // perTick: a pause every perTick deltas, as output arriving in stdout chunks would have.
        if (perTick && index > 0 && index % perTick === 0) await new Promise((resolve) => setImmediate(resolve));
        emit({ type: 'run.message_delta', runId, blockId, text: word(index) });
      }
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    },
  });
  const runtime = await createAgentRuntime({ providers: [provider], store: await openSqliteStore({ dataDir }) });
  try {
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    const controller = new AbortController();
    let delivered = 0;
    let started = NaN;
    let elapsed = NaN;
    const consumer = (async () => {
      for await (const event of runtime.subscribe(sessionId, { signal: controller.signal })) {
        if (Number.isNaN(started)) continue; // session.opened, replayed
        delivered += 1;
        if (event.type === 'run.completed') {
          elapsed = performance.now() - started;
          return;
        }
      }
    })();
    started = performance.now();
    await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'bench' }] });
    await consumer;
    return { delivered, ms: elapsed, eventsPerSecond: delivered / (elapsed / 1000) };
  } finally {
    await runtime.shutdown();
  }
}

export async function measureRuntimeMock({
  deltas = 2000,
  rounds = 5,
  variants = [
    { name: 'one burst', perTick: 0 },
    { name: '100 per tick', perTick: 100 },
    { name: '1 per tick', perTick: 1 },
  ],
} = {}) {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-mock-'));
  await mkdir(path.join(root, 'workspace'));
  try {
    await mockTurn({ root, deltas: 200, perTick: 0 });
    const results = [];
    for (const variant of variants) {
      const runs = [];
      for (let round = 0; round < rounds; round += 1)
        runs.push(await mockTurn({ root, deltas, perTick: variant.perTick }));
      results.push({
        variant: variant.name,
        perTick: variant.perTick,
        delivered: runs[0].delivered,
        turnMs: median(runs.map((run) => run.ms)),
        eventsPerSecond: median(runs.map((run) => run.eventsPerSecond)),
      });
    }
    return results;
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
