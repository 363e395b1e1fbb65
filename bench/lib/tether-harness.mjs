/**
 * Tether for the lifecycle scenarios: a runtime over SQLite in a temp data dir with one Claude
 * provider (settings per scenario), and an event watch per session that keeps every delivered
 * event with its delivery time, so a scenario waits for "the first event like this after that
 * mark" without races.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import { observeEmits } from './observe-emits.mjs';
import { TimedEntries } from './timed-entries.mjs';

/**
 * `recordCommits`: the store is wrapped (one extra call per commit) to keep when each commit
 * started and what it held, to tell the writer's coalescing from the CLI's own timing.
 */
export async function startTether({ claudePath, environment, provider = {}, recordCommits = false }) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'tether-bench-data-'));
  const store = await openSqliteStore({ dataDir });
  const commits = [];
  let wrapped = store;
  if (recordCommits) {
    wrapped = Object.create(store);
    wrapped.commit = (unit) => {
      const entry = {
        at: performance.now(),
        types: unit.events.map((event) => event.type),
        sessions: unit.sessions.length,
        runs: unit.runs.length,
        receipts: unit.receipts.length,
      };
      commits.push(entry);
      const promise = store.commit(unit);
      entry.returnedAt = performance.now();
      promise.then(
        () => {
          entry.settledAt = performance.now();
        },
        () => {},
      );
      return promise;
    };
    wrapped.close = () => store.close();
  }
  // With recordCommits the provider is wrapped too, to keep when it emitted each part (the moment
  // a CLI line was translated), before the runtime persisted and published it.
  const emits = [];
  const claude = createClaudeProvider({ claudePath, environment, ...provider });
  const observed = recordCommits
    ? observeEmits(claude, (_sessionId, part) => emits.push({ at: performance.now(), type: part.type }))
    : claude;
  const runtime = await createAgentRuntime({ providers: [observed], store: wrapped });
  let disposed = false;
  return {
    runtime,
    dataDir,
    commits,
    emits,
    async dispose() {
      if (disposed) return;
      disposed = true;
      await runtime.shutdown().catch(() => {});
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export class EventWatch {
  constructor(runtime, sessionId) {
    this.log = new TimedEntries((entry) => entry.event);
    /** Every delivered event: { event, at }. */
    this.events = this.log.entries;
    this.controller = new AbortController();
    this.ended = false;
    this.done = (async () => {
      for await (const event of runtime.subscribe(sessionId, { afterSeq: 0, signal: this.controller.signal })) {
        this.log.add({ event, at: performance.now() });
      }
    })()
      .catch(() => {})
      .finally(() => {
        this.ended = true;
        this.log.end(new Error('the subscription ended while waiting'));
      });
  }

  mark() {
    return this.log.mark();
  }

  /** The first event at or after `from` that matches: { event, at }. */
  waitFor(predicate, from = 0, timeoutMs = 60_000) {
    if (this.ended && !this.events.slice(from).some((entry) => predicate(entry.event)))
      return Promise.reject(new Error('the subscription has ended'));
    return this.log.waitFor(
      predicate,
      from,
      timeoutMs,
      () =>
        `tether: no matching event within ${timeoutMs} ms (last: ${this.events
          .slice(-3)
          .map((entry) => entry.event.type)
          .join(', ')})`,
    );
  }

  /** The pid of the session's latest agent process (from session.process_started). */
  latestPid() {
    for (let index = this.events.length - 1; index >= 0; index -= 1) {
      if (this.events[index].event.type === 'session.process_started') return this.events[index].event.pid;
    }
    return undefined;
  }

  async stop() {
    this.controller.abort();
    await this.done;
  }
}

/** One turn through Tether: submitTurn → first run.message_delta → run.completed (must succeed). */
export async function tetherTurn(runtime, watch, sessionId, text, { start = performance.now() } = {}) {
  const mark = watch.mark();
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const delta = watch.waitFor((event) => event.type === 'run.message_delta' && event.runId === runId, mark);
  delta.catch(() => {});
  const completed = await watch.waitFor((event) => event.type === 'run.completed' && event.runId === runId, mark);
  if (completed.event.outcome !== 'succeeded')
    throw new Error(
      `tether: the run ended ${completed.event.outcome}: ${JSON.stringify(completed.event.error ?? null)}`,
    );
  const first = await delta;
  return { runId, firstDeltaMs: first.at - start, turnMs: completed.at - start, endedAt: completed.at };
}
