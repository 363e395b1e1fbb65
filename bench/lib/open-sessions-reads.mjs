/**
 * The sessions scenario's reads and checks against a daemon holding many open sessions: how long a
 * listing and a snapshot take, what the daemon's /v1/metrics says of its event loop, and whether
 * every event of a session is stored and delivered exactly once, seq after seq.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { RawSubscriber } from './fan-out-subscribers.mjs';
import { spread } from './load-scenario.mjs';

/** The ms each of `count` sequential calls of `call` took. */
async function timeCalls(count, call) {
  const times = [];
  for (let index = 0; index < count; index += 1) {
    const started = performance.now();
    await call(index);
    times.push(performance.now() - started);
  }
  return times;
}

/**
 * Listing and snapshot latency, sequential requests through @tether/client (HTTP, JSON, validation
 * included): the first page (the daemon's default 50), the whole listing page by page at the default
 * size and at the largest (500), and one session's snapshot picked at random each time.
 */
export async function measureReads(client, ids, { firstPages = 30, fullListings = 5, snapshots = 100 } = {}) {
  let listed = { default: 0, largest: 0 };
  const firstPage = await timeCalls(firstPages, () => client.listSessions());
  const fullDefault = await timeCalls(fullListings, async () => {
    listed.default = (await client.listAllSessions()).length;
  });
  const fullLargest = await timeCalls(fullListings, async () => {
    listed.largest = (await client.listAllSessions({ limit: 500 })).length;
  });
  const snapshot = await timeCalls(snapshots, () => client.getSession(ids[Math.floor(Math.random() * ids.length)]));
  listed = { ...listed, expected: ids.length };
  return {
    firstPage: spread(firstPage),
    fullListing: spread(fullDefault),
    fullListingLargestPages: spread(fullLargest),
    snapshot: spread(snapshot),
    listed,
  };
}

/**
 * While `running` holds: a first page and a snapshot of a random session, one after the other every
 * `everyMs`, and how many claude processes the daemon has; resolves with their latencies and the most
 * processes seen.
 */
export async function sampleDuringTurns(client, ids, { running, countProcesses, everyMs = 100 }) {
  const firstPage = [];
  const snapshot = [];
  let mostProcesses = 0;
  while (running()) {
    mostProcesses = Math.max(mostProcesses, countProcesses());
    let started = performance.now();
    await client.listSessions();
    firstPage.push(performance.now() - started);
    started = performance.now();
    await client.getSession(ids[Math.floor(Math.random() * ids.length)]);
    snapshot.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return { firstPage: spread(firstPage), snapshot: spread(snapshot), mostProcesses };
}

/** The daemon's /v1/metrics as {name{labels} → value}; prom-client resets its event-loop histogram at every scrape. */
export async function scrapeMetrics(daemon) {
  const response = await fetch(`${daemon.url}/v1/metrics`, { headers: { authorization: `Bearer ${daemon.token}` } });
  if (!response.ok) throw new Error(`sessions scenario: /v1/metrics answered ${response.status}`);
  const values = {};
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    values[line.slice(0, space)] = Number(line.slice(space + 1));
  }
  return values;
}

/** Seqs that are not exactly 1..last, once each and in order: empty when the list is whole. */
function seqGaps(seqs, last) {
  const problems = [];
  for (let index = 0; index < Math.max(seqs.length, last); index += 1) {
    if (seqs[index] !== index + 1) {
      problems.push({ at: index, expected: index + 1, got: seqs[index] ?? null });
      if (problems.length >= 5) break;
    }
  }
  return problems;
}

/**
 * For each used session: its stored lastSeq (the snapshot), the seqs its live follower received, and
 * a fresh replay from seq 0 over a raw SSE stream (no client-side gap repair): both must be 1..lastSeq.
 */
export async function checkEventLogs(daemon, client, watches) {
  const agent = new http.Agent({ keepAlive: false, maxSockets: 16 });
  const broken = [];
  let events = 0;
  try {
    for (const { sessionId, watch } of watches) {
      const { lastSeq } = await client.getSession(sessionId);
      events += lastSeq;
      const followed = seqGaps(
        watch.events.map((entry) => entry.event.seq),
        lastSeq,
      );
      const replay = new RawSubscriber({ url: daemon.url, token: daemon.token, sessionId, afterSeq: 0, agent });
      try {
        await replay.waitUntil(() => replay.lastSeq >= lastSeq, 30_000);
      } finally {
        replay.stop();
      }
      const replayed = seqGaps(
        replay.times.map((_, seq) => seq).filter((seq) => seq > 0),
        lastSeq,
      );
      if (followed.length > 0 || replayed.length > 0) broken.push({ sessionId, lastSeq, followed, replayed });
    }
  } finally {
    agent.destroy();
  }
  return { sessions: watches.length, events, broken };
}
