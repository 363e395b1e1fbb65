/**
 * SQLite has no cross-process fan-out (one process holds a data directory), so the store scenario
 * gives its in-process equivalent: a runtime over SQLite whose mock provider emits paced bursts of
 * deltas; the latency from each commit resolving (the store is wrapped to stamp it) to a
 * runtime.subscribe() consumer having the unit's last event.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { createMockProvider } from '@tether/testkit';
import { monotonicMs } from './monotonic-clock.mjs';
import { quantile, round } from './stats.mjs';

export async function measureHubLatency({ units = 150, eventsPerUnit = 4, intervalMs = 20 } = {}) {
  const root = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-hub-'));
  await mkdir(path.join(root, 'workspace'));
  const store = await openSqliteStore({ dataDir: path.join(root, 'data') });
  /** seq → when the commit holding it as its last event resolved. */
  const resolvedAt = new Map();
  const timed = Object.create(store);
  timed.commit = (unit) => {
    const promise = store.commit(unit);
    // Only the provider's paced bursts count (not the session's opening or the turn's start).
    const last = unit.events.at(-1);
    if (last?.type === 'run.message_delta')
      promise.then(
        () => resolvedAt.set(last.seq, monotonicMs()),
        () => {},
      );
    return promise;
  };
  timed.close = () => store.close();
  const provider = createMockProvider({
    async turn({ runId, emit }) {
      for (let unit = 0; unit < units; unit += 1) {
        for (let index = 0; index < eventsPerUnit; index += 1)
          emit({ type: 'run.message_delta', runId, blockId: 'msg_01Hub:0', text: `u${unit}e${index} ` });
        await new Promise((resolve) => setTimeout(resolve, intervalMs));
      }
      emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    },
  });
  const runtime = await createAgentRuntime({ providers: [provider], store: timed });
  try {
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: path.join(root, 'workspace') },
    });
    const arrivedAt = new Map();
    const controller = new AbortController();
    const consumer = (async () => {
      for await (const event of runtime.subscribe(sessionId, { signal: controller.signal })) {
        arrivedAt.set(event.seq, monotonicMs());
        if (event.type === 'run.completed') return;
      }
    })();
    await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'bench' }] });
    await consumer;
    const latencies = [...resolvedAt].filter(([seq]) => arrivedAt.has(seq)).map(([seq, at]) => arrivedAt.get(seq) - at);
    return {
      n: latencies.length,
      p50: round(quantile(latencies, 0.5), 3),
      p99: round(quantile(latencies, 0.99), 3),
      max: round(Math.max(...latencies), 3),
    };
  } finally {
    await runtime.shutdown();
    await rm(root, { recursive: true, force: true });
  }
}
