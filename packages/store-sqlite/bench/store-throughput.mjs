// Events per second through commit(), in batches the size the runtime's event writer produces
// while a turn streams. Runs against the built package: `tsc -b packages/store-sqlite` first.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqliteStore } from '../dist/index.js';

const batchSize = 100;
const totalEvents = 20_000;
const at = new Date().toISOString();
const sessionId = `ses_${'0'.repeat(32)}`;
const runId = `run_${'1'.repeat(32)}`;

function sessionRecord(lastSeq) {
  return {
    sessionId,
    provider: 'claude',
    workspace: { kind: 'directory', path: '/work/project' },
    configuration: { model: 'sonnet' },
    ephemeral: false,
    redactInput: false,
    state: 'running',
    activeRunId: runId,
    permissionMode: null,
    providerSessionId: 'provider-session',
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: null },
    lastSeq,
    createdAt: at,
    updatedAt: at,
  };
}

function batch(firstSeq) {
  const events = [];
  for (let seq = firstSeq; seq < firstSeq + batchSize; seq += 1) {
    events.push({ type: 'run.message_delta', sessionId, seq, at, runId, blockId: 'block-1', text: `token ${seq} ` });
  }
  return { events, sessions: [sessionRecord(firstSeq + batchSize - 1)], runs: [], interactions: [], receipts: [] };
}

const directory = await mkdtemp(path.join(tmpdir(), 'tether-store-throughput-'));
try {
  const store = await openSqliteStore({ dataDir: directory });
  try {
    const units = [];
    for (let firstSeq = 1; firstSeq <= totalEvents; firstSeq += batchSize) units.push(batch(firstSeq));
    const started = process.hrtime.bigint();
    for (const unit of units) await store.commit(unit);
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    console.log(JSON.stringify({ eventsPerSecond: Math.round(totalEvents / seconds), batchSize, events: totalEvents }));
  } finally {
    await store.close();
  }
} finally {
  await rm(directory, { recursive: true, force: true });
}
