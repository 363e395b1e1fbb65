/**
 * One "daemon" of the store scenario (bench/lib/store-scale-out.mjs): a Node process with
 * its own store (its own SQLite handle, or its own PostgreSQL pool and owner id) that writes only its
 * own sessions, replays a long session, or follows another process's appends through
 * store.coordination.onAppended. It answers the bench over the IPC channel; every time it reports is
 * CLOCK_MONOTONIC (monotonicMs), which every process of the host reads alike.
 */
import { newRunId, newSessionId } from '@tether/protocol';
import { openPostgresStore } from '@tether/store-postgres';
import { openSqliteStore } from '@tether/store-sqlite';
import { sampleSessionRecord } from '@tether/testkit';
import { exitWithParent } from './lib/exit-with-parent.mjs';
import { monotonicMs } from './lib/monotonic-clock.mjs';
import { deltaUnit } from './lib/store-throughput.mjs';

let store = null;
/** The sessions this process writes: id → { session, runId, lastSeq } (a write, for deltaUnit). */
const own = new Map();
let follower = null;

const sleepUntil = (at) => new Promise((resolve) => setTimeout(resolve, Math.max(0, at - monotonicMs())));

/** A unit is committed whole or not at all: on a refusal the seqs it took are given back. */
async function commitUnit(writes, eventsPerSession) {
  const before = writes.map((write) => write.lastSeq);
  try {
    await store.commit(deltaUnit(writes, eventsPerSession));
  } catch (error) {
    writes.forEach((write, index) => (write.lastSeq = before[index]));
    throw error;
  }
}

async function createSessions(count) {
  const created = [];
  for (let index = 0; index < count; index += 1) {
    const id = newSessionId();
    const session = sampleSessionRecord({ sessionId: id, lastSeq: 0 });
    await store.commit({ events: [], sessions: [session], runs: [], interactions: [], receipts: [], blobs: [] });
    own.set(id, { session, runId: newRunId(), lastSeq: 0 });
    created.push(id);
  }
  return created;
}

/**
 * Commits units back to back, one at a time (the EventWriter has one commit in flight per runtime),
 * each touching the next `sessionsPerUnit` own sessions round robin, from `startAt` for `durationMs`.
 */
async function appendFor({ sessionsPerUnit, eventsPerSession, startAt, durationMs }) {
  const sessions = [...own.values()];
  const commitMs = [];
  let events = 0;
  let next = 0;
  await sleepUntil(startAt);
  let now = monotonicMs();
  while (now < startAt + durationMs) {
    const touched = Array.from({ length: sessionsPerUnit }, (_, index) => sessions[(next + index) % sessions.length]);
    next = (next + sessionsPerUnit) % sessions.length;
    const sent = now;
    await commitUnit(touched, eventsPerSession);
    now = monotonicMs();
    commitMs.push(now - sent);
    events += sessionsPerUnit * eventsPerSession;
  }
  return { events, units: commitMs.length, endedAt: now, commitMs };
}

/** Units paced `intervalMs` apart, each stamped when its commit resolved (the fan-out's start). */
async function appendPaced({ sessionIds, eventsPerSession, units, intervalMs }) {
  const sessions = sessionIds.map((id) => own.get(id));
  const committed = [];
  for (let unit = 0; unit < units; unit += 1) {
    const sentAt = monotonicMs();
    await commitUnit(sessions, eventsPerSession);
    const resolvedAt = monotonicMs();
    committed.push({
      sentAt,
      resolvedAt,
      lastSeqs: Object.fromEntries(sessions.map((write) => [write.session.sessionId, write.lastSeq])),
    });
    await sleepUntil(sentAt + intervalMs);
  }
  return { committed };
}

/** A long session in big units (setup for the replay, not measured). */
async function fillSession({ events, unitSize }) {
  const [sessionId] = await createSessions(1);
  const session = own.get(sessionId);
  for (let written = 0; written < events; written += unitSize)
    await commitUnit([session], Math.min(unitSize, events - written));
  return { sessionId };
}

/** Reads the whole session a page at a time, each page after the last, as followSession replays. */
async function replay({ sessionId, pageSize, startAt }) {
  await sleepUntil(startAt);
  const started = monotonicMs();
  let last = 0;
  let pages = 0;
  for (;;) {
    const page = await store.readEvents(sessionId, { afterSeq: last, limit: pageSize });
    pages += 1;
    if (page.length > 0) last = page.at(-1).seq;
    if (page.length < pageSize) break;
  }
  return { events: last, pages, ms: monotonicMs() - started };
}

/**
 * Learns of other processes' appends through onAppended and reads the new rows (one read in flight
 * per session, notices coalesced, as the runtime's remote appends do); stamps when each seq was read.
 */
function startFollowing({ sessionIds }) {
  const state = new Map(sessionIds.map((id) => [id, { last: 0, reading: false, again: false, arrivedAt: {} }]));
  let notices = 0;
  const read = async (sessionId) => {
    const entry = state.get(sessionId);
    if (!entry) return;
    if (entry.reading) {
      entry.again = true;
      return;
    }
    entry.reading = true;
    do {
      entry.again = false;
      const page = await store.readEvents(sessionId, { afterSeq: entry.last, limit: 500 });
      const at = monotonicMs();
      for (const event of page) entry.arrivedAt[event.seq] = at;
      if (page.length > 0) entry.last = page.at(-1).seq;
      if (page.length === 500) entry.again = true;
    } while (entry.again);
    entry.reading = false;
  };
  const remove = store.coordination.onAppended((notice) => {
    notices += 1;
    if (notice === 'resync') for (const id of state.keys()) void read(id);
    else void read(notice.sessionId);
  });
  follower = { state, remove, notices: () => notices };
  return {};
}

function stopFollowing() {
  follower.remove();
  const arrivedAt = Object.fromEntries([...follower.state].map(([id, entry]) => [id, entry.arrivedAt]));
  const result = { notices: follower.notices(), arrivedAt };
  follower = null;
  return result;
}

async function open({ kind, dataDir, url, ownerId }) {
  store =
    kind === 'sqlite'
      ? await openSqliteStore({ dataDir })
      : // Each process its own lease owner: a commit touching another owner's session is refused.
        await openPostgresStore({ url, ownerId, maxConnections: 4 });
  return { coordination: store.coordination !== undefined && typeof store.coordination.onAppended === 'function' };
}

const handlers = {
  open,
  clock: () => ({ t: monotonicMs() }),
  create: ({ count }) => createSessions(count).then((sessionIds) => ({ sessionIds })),
  append: appendFor,
  appendPaced,
  fill: fillSession,
  replay,
  follow: startFollowing,
  seen: () => ({ lastSeqs: Object.fromEntries([...(follower?.state ?? [])].map(([id, entry]) => [id, entry.last])) }),
  stopFollowing,
};

process.on('message', async (message) => {
  try {
    const result = await handlers[message.type](message);
    process.send({ id: message.id, ok: true, ...result });
  } catch (error) {
    process.send({
      id: message.id,
      ok: false,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
});

exitWithParent(async () => {
  follower?.remove();
  await store?.close();
});
process.send({ id: 0, ok: true, ready: true });
