#!/usr/bin/env node
/**
 * What keeping every message durable costs an Agent SDK host, beside Tether (opt-in; not part of
 * `npm run bench`): the question of docs/decisions/2026-12-03-durable-events-bound-the-short-turn-and-the-stop.md.
 *
 * Three legs a round, each in a fresh host process (bench/peer-leg-host.mjs; the legs are in
 * bench/lib/durable-log-legs.mjs), in an order that turns from round to round:
 *   sdk          query() with streaming input, as the peers scenario's SDK leg drives it;
 *   sdk-durable  the same, with a SQLite log opened as Tether's store opens it: each user message
 *                committed before it is sent, each message the SDK yields committed before the host
 *                handles it, one transaction each;
 *   tether       an in-process runtime over SQLite (the peers scenario's Tether leg).
 * Each leg takes two short turns, then the peers legs' 25 short turns and 10 stops. Printed: each
 * leg's medians, and its ratios to the plain SDK leg of the same round (the median over rounds); then
 * each leg's own part of a short turn and of a stop, timed around the CLI as the peers legs time it
 * (bench/lib/stdio-timestamps.mjs): before claude hears of it and after its result is read, the median
 * over rounds.
 *
 *   ./dev npm run build && ./dev node bench/durable-log-comparison.mjs [--rounds N (9)]
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { killLeftoverProcesses } from './lib/claude-processes.mjs';
import { baseEnvironment, findClaudeBinary, rawLaunch } from './lib/claude-setup.mjs';
import { startFakeApiProcess } from './lib/fake-api-process.mjs';
import { runLegProcess } from './lib/peer-comparison.mjs';
import { SHORT, SLOW } from './lib/scripted-prompts.mjs';
import { median } from './lib/stats.mjs';

const repoRoot = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
/** Each leg's name here, and its driver's in bench/peer-leg-host.mjs. */
const legs = { sdk: 'sdk-short', 'sdk-durable': 'sdk-durable-short', tether: 'tether-short' };
const figures = ['warmShortMs', 'firstInterruptMs', 'interruptMs'];

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
    const names = Object.keys(legs);
    const results = Object.fromEntries(names.map((name) => [name, []]));
    for (let round = 0; round < rounds; round += 1) {
      const line = [];
      for (const name of names.map((_, index) => names[(index + round) % names.length])) {
        const { warmShort, firstInterruptMs, interruptMs, ownParts } = await runLegProcess(
          legs[name],
          context,
          repoRoot,
        );
        await killLeftoverProcesses(environment.HOME);
        const result = { warmShortMs: warmShort.turnMs, firstInterruptMs, interruptMs, ownParts };
        results[name].push(result);
        line.push(`${name} ${figures.map((figure) => result[figure].toFixed(2)).join('/')}`);
      }
      console.log(`round ${round + 1}: ${line.join('  ')} (short turn / first stop / next stops, ms)`);
    }
    for (const name of names) {
      const medians = figures.map((figure) => median(results[name].map((result) => result[figure])).toFixed(2));
      const ratios = figures.map((figure) =>
        median(results[name].map((result, round) => result[figure] / results.sdk[round][figure])).toFixed(3),
      );
      console.log(
        `${name.padEnd(12)} short turn ${medians[0]} ms (x${ratios[0]} the SDK's), first stop ${medians[1]} ms (x${ratios[1]}), next stops ${medians[2]} ms (x${ratios[2]})`,
      );
    }
    console.log('Own part around the CLI (ms; before: call → written to claude; after: result read → end seen):');
    for (const name of names) {
      const part = (figure) => median(results[name].map((result) => result.ownParts[figure])).toFixed(3);
      console.log(
        `${name.padEnd(12)} short turn ${part('turnBefore')} + ${part('turnAfter')} (claude ${part('turnCli')}), stop ${part('stopBefore')} + ${part('stopAfter')} (claude ${part('stopCli')})`,
      );
    }
  } finally {
    await api.stop();
    await rm(root, { recursive: true, force: true });
  }
}

const [flag, value] = process.argv.slice(2);
const rounds = flag === '--rounds' ? Number(value) : 9;
if (!Number.isInteger(rounds) || rounds < 1) throw new Error('--rounds must be a positive integer');
await compare(rounds);
