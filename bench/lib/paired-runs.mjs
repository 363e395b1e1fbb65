/**
 * Paired measurements: the legs of a pair (or triple, …) run back to back in an order that changes
 * from pair to pair (legOrder), so drift over the run favours no leg, and each pair records how busy the rest
 * of the machine was, so a pair measured under someone else's load can be told apart.
 */
import { performance } from 'node:perf_hooks';
import { machineBusyMs, treeCpuMs } from './proc.mjs';

/** Cores used by everything outside this process tree (the bench, its fake API, its claude children) from now to end(). */
function startOtherLoadMeter() {
  const busy = machineBusyMs();
  const own = treeCpuMs();
  const started = performance.now();
  return { end: () => (machineBusyMs() - busy - (treeCpuMs() - own)) / (performance.now() - started) };
}

/**
 * The order of the legs in pair (or triple, …) number `index`. Over a cycle every leg runs in every
 * position and right after every other leg equally often (a Williams design: as many orders as legs for
 * an even number of them, twice as many for an odd one), so neither drift nor what the leg before left
 * behind (the page cache, memory being given back, a disk still writing) favours one. A plain rotation
 * ran each of four legs after the same one three rounds in four. For two legs it is the alternation.
 */
function legOrder(legs, index) {
  const count = legs.length;
  // The first order is 0, 1, n-1, 2, n-2, …; the others add their number to each position.
  const first = [0];
  for (let low = 1, high = count - 1; first.length < count; ) {
    first.push(low++);
    if (first.length < count) first.push(high--);
  }
  const cycle = count % 2 === 0 ? count : 2 * count;
  const row = index % cycle;
  const shifted = first.map((position) => legs[(position + row) % count]);
  return row >= count ? shifted.reverse() : shifted;
}

function describe(leg) {
  return Object.entries(leg)
    .filter(([key, value]) => key.endsWith('Ms') && Number.isFinite(value))
    .map(([key, value]) => `${key.replace(/Ms$/, '')}=${value.toFixed(1)}`)
    .join(' ');
}

/** Every leg's figures ending in Ms, then the load: a scenario whose legs say more passes its own `describePair`. */
function describeLegs(pair, legs) {
  return `${legs.map((leg) => `${leg} ${describe(pair[leg])}`).join('  ')}  other load ${pair.otherLoadCores.toFixed(2)}`;
}

/** Runs `repetitions` pairs of `run(leg, index)`, logging one line per pair. */
export async function runPairs({ legs, repetitions, gate, label, run, log, describePair = describeLegs }) {
  const pairs = [];
  for (let index = 0; index < repetitions; index += 1) {
    await gate.beforePair();
    const meter = startOtherLoadMeter();
    const order = legOrder(legs, index);
    const pair = { repetition: index + 1, order: order.join(',') };
    for (const leg of order) pair[leg] = await run(leg, index);
    pair.otherLoadCores = meter.end();
    pair.quiet = pair.otherLoadCores < gate.quietCores;
    pairs.push(pair);
    log?.(`bench: ${label} #${pair.repetition} ${pair.order.padEnd(18)} ${describePair(pair, legs)}`);
  }
  return pairs;
}
