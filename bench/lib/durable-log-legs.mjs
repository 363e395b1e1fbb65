/**
 * The legs of bench/durable-log-comparison.mjs (the durable one is also the peers scenario's durable
 * floor, bench/lib/peer-comparison.mjs), each run in a host of its own (bench/peer-leg-host.mjs):
 * two short turns, then the peers legs' short turns and stops, through the Agent SDK (plain, or keeping
 * a durable log of every message) or Tether, each also timed around the CLI as the peers legs' are (the
 * driver's own part: from the call to the write to claude, and from the result read to the end seen).
 */
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DatabaseSync } from 'node:sqlite';
import { endQuery, measureSdkShortTurnsAndStops, sdkOptions, startQuery } from './peer-sdk-leg.mjs';
import { measureTetherShortTurnsAndStops } from './peer-tether-leg.mjs';
import { EventWatch, startTether, tetherTurn } from './tether-harness.mjs';

/**
 * An append-only log of every message, one transaction a message (what a careful SDK host would keep),
 * opened as Tether's store opens its database: WAL, synchronous=NORMAL, one exclusive connection.
 */
function durableLog(file) {
  const database = new DatabaseSync(file);
  database.exec('PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
  database.exec(
    'CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, at TEXT NOT NULL)',
  );
  database.exec('CREATE INDEX messages_by_session ON messages (session_id, seq)');
  const insert = database.prepare('INSERT INTO messages (session_id, type, body, at) VALUES (?, ?, ?, ?)');
  return (message) => {
    database.exec('BEGIN IMMEDIATE');
    insert.run(message.session_id ?? '', message.type, JSON.stringify(message), new Date().toISOString());
    database.exec('COMMIT');
  };
}

async function sdkShortTurnsAndStops(context, record) {
  const { q, input, timer, done, first } = startQuery(sdkOptions(context), context.short, record);
  await first;
  const warm = timer.turn(performance.now());
  input.push(context.short);
  await warm;
  const measured = await measureSdkShortTurnsAndStops({ q, input, timer }, context);
  await endQuery(q, input, done);
  return measured;
}

export const runSdkShortLeg = (context) => sdkShortTurnsAndStops(context);

/** Each user message committed before it is sent, each message the SDK yields before the host handles it. */
export const runSdkDurableShortLeg = (context) =>
  sdkShortTurnsAndStops(context, durableLog(path.join(context.root, `messages-${process.pid}.db`)));

export async function runTetherShortLeg(context) {
  const tether = await startTether(context);
  const { sessionId } = await tether.runtime.openSession({ workspace: { kind: 'directory', path: context.workspace } });
  const watch = new EventWatch(tether.runtime, sessionId);
  try {
    for (let turn = 0; turn < 2; turn += 1) await tetherTurn(tether.runtime, watch, sessionId, context.short);
    return await measureTetherShortTurnsAndStops(tether.runtime, watch, sessionId, context);
  } finally {
    await watch.stop();
    await tether.dispose();
  }
}
