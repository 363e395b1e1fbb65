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

/** Commits `deltas` message deltas of one run in batches of `batchSize`, as the writer does; returns events/s. */
async function commitDirect({ store, session, deltas, batchSize }) {
  const runId = newRunId();
  const { sessionId } = session;
  const blockId = 'msg_01BenchBenchBenchBenchBench:0';
  let lastSeq = session.lastSeq;
  const started = performance.now();
  for (let from = 0; from < deltas; from += batchSize) {
    const events = [];
    const to = Math.min(deltas, from + batchSize);
    const at = new Date().toISOString();
    for (let index = from; index < to; index += 1) {
      lastSeq += 1;
      events.push({ type: 'run.message_delta', runId, blockId, text: word(index), sessionId, seq: lastSeq, at });
    }
    // The writer stages the session record with every batch of provider output.
    await store.commit({
      events,
      sessions: [{ ...session, state: 'running', activeRunId: runId, lastSeq, updatedAt: at }],
      runs: [],
      interactions: [],
      receipts: [],
      blobs: [],
    });
  }
  session.lastSeq = lastSeq;
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
        emit({ type: 'run.message_delta', runId, blockId: 'msg_01BenchBenchBenchBenchBench:0', text: word(index) });
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
