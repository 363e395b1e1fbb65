#!/usr/bin/env node
/**
 * What keeping every message durable costs an Agent SDK host, beside Tether (opt-in; not part of
 * `npm run bench`): the question of docs/decisions/2026-12-03-durable-events-bound-the-short-turn-and-the-stop.md.
 *
 * Three legs a round, each in a fresh host process, in an order that turns from round to round:
 *   sdk          query() with streaming input, as the peers scenario's SDK leg drives it;
 *   sdk-durable  the same, with a SQLite log (WAL, synchronous=NORMAL, one exclusive connection, as
 *                Tether's store opens it): each user message committed before it is sent, each
 *                message the SDK yields committed before the host handles it, one transaction each;
 *   tether       an in-process runtime over SQLite (the peers scenario's Tether leg).
 * Each leg takes two short turns, then the peers legs' 25 short turns and 10 stops. Printed: each
 * leg's medians, and its ratios to the plain SDK leg of the same round (the median over rounds).
 *
 *   ./dev npm run build && ./dev node bench/durable-log-comparison.mjs [--rounds N (9)]
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { DatabaseSync } from 'node:sqlite';
import { text } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { baseEnvironment, findClaudeBinary, rawLaunch } from './lib/claude-setup.mjs';
import { startFakeApiProcess } from './lib/fake-api-process.mjs';
import { SHORT, SLOW } from './lib/scripted-prompts.mjs';
import { median } from './lib/stats.mjs';

const repoRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const legs = ['sdk', 'sdk-durable', 'tether'];
const figures = ['warmShortMs', 'firstInterruptMs', 'interruptMs'];

/** An append-only log of every message, committed one message at a time (what a careful SDK host would keep). */
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

async function sdkLeg(context, record) {
  const { endQuery, measureSdkShortTurnsAndStops, sdkOptions, startQuery } = await import('./lib/peer-sdk-leg.mjs');
  const { q, input, timer, done, first } = startQuery(sdkOptions(context), context.short, record);
  await first;
  const warm = timer.turn(performance.now());
  input.push(context.short);
  await warm;
  const measured = await measureSdkShortTurnsAndStops({ q, input, timer }, context);
  await endQuery(q, input, done);
  return measured;
}

async function tetherLeg(context) {
  const { EventWatch, startTether, tetherTurn } = await import('./lib/tether-harness.mjs');
  const { measureTetherShortTurnsAndStops } = await import('./lib/peer-tether-leg.mjs');
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

async function runLeg(leg, context) {
  if (leg === 'tether') return tetherLeg(context);
  const record = leg === 'sdk-durable' ? durableLog(path.join(context.root, `messages-${process.pid}.db`)) : undefined;
  return sdkLeg(context, record);
}

/** One leg in a fresh host (this file with --leg), its context on stdin, its result as one JSON line. */
async function legProcess(leg, context) {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--leg', leg], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const line = new Promise((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  const exit = new Promise((resolve) => child.once('close', resolve));
  child.stdin.end(JSON.stringify(context));
  const code = await exit;
  if (code !== 0) throw new Error(`the ${leg} leg failed (exit ${code})`);
  const { warmShort, firstInterruptMs, interruptMs } = JSON.parse(await line);
  return { warmShortMs: warmShort.turnMs, firstInterruptMs, interruptMs };
}

async function compare(rounds) {
  const claude = findClaudeBinary();
  if (!claude.path) throw new Error(claude.reason);
  const root = await mkdtemp(path.join(os.tmpdir(), 'tether-durable-log-'));
  const api = await startFakeApiProcess(repoRoot, 2000);
  try {
    const environment = await baseEnvironment({ root, apiUrl: api.url });
    const workspace = path.join(root, 'workspace');
    await mkdir(workspace);
    const { env } = rawLaunch({ environment, providerSessionId: '00000000-0000-4000-8000-000000000000' });
    const context = { claudePath: claude.path, environment, rawEnv: env, workspace, root, short: SHORT, slow: SLOW };
    const results = Object.fromEntries(legs.map((leg) => [leg, []]));
    for (let round = 0; round < rounds; round += 1) {
      const order = legs.map((_, index) => legs[(index + round) % legs.length]);
      const line = [];
      for (const leg of order) {
        const result = await legProcess(leg, context);
        results[leg].push(result);
        line.push(`${leg} ${figures.map((figure) => result[figure].toFixed(2)).join('/')}`);
      }
      console.log(`round ${round + 1}: ${line.join('  ')} (short turn / first stop / next stops, ms)`);
    }
    for (const leg of legs) {
      const medians = figures.map((figure) => median(results[leg].map((result) => result[figure])).toFixed(2));
      const ratios = figures.map((figure) =>
        median(results[leg].map((result, round) => result[figure] / results.sdk[round][figure])).toFixed(3),
      );
      console.log(
        `${leg.padEnd(12)} short turn ${medians[0]} ms (x${ratios[0]} the SDK's), first stop ${medians[1]} ms (x${ratios[1]}), next stops ${medians[2]} ms (x${ratios[2]})`,
      );
    }
  } finally {
    await api.stop();
    await rm(root, { recursive: true, force: true });
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--leg') {
  const result = await runLeg(argv[1], JSON.parse(await text(process.stdin)));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} else {
  const rounds = argv[0] === '--rounds' ? Number(argv[1]) : 9;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
  await compare(rounds);
}
