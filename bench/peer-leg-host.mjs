#!/usr/bin/env node
// One leg of the peers scenario (bench/lib/peer-comparison.mjs, or bench/durable-log-comparison.mjs) in a host process of its own, so
// its CPU and RSS are the driver's alone: reads the context as JSON on stdin, runs the named leg,
// prints its result as one JSON line. Only the leg's own driver is imported (and the stdio timestamps
// every leg's short turns and stops are timed with).
import { text } from 'node:stream/consumers';
import { installStdioTimestamps } from './lib/stdio-timestamps.mjs';

// Before any driver opens its claude: each times its short turns and stops around the CLI.
installStdioTimestamps();

const drivers = {
  raw: async () => (await import('./lib/peer-raw-leg.mjs')).runRawPeerLeg,
  sdk: async () => (await import('./lib/peer-sdk-leg.mjs')).runSdkPeerLeg,
  tether: async () => (await import('./lib/peer-tether-leg.mjs')).runTetherPeerLeg,
  acp: async () => (await import('./lib/peer-acp-leg.mjs')).runAcpPeerLeg,
  // bench/durable-log-comparison.mjs: short turns and stops only.
  'sdk-short': async () => (await import('./lib/durable-log-legs.mjs')).runSdkShortLeg,
  'sdk-durable-short': async () => (await import('./lib/durable-log-legs.mjs')).runSdkDurableShortLeg,
  'tether-short': async () => (await import('./lib/durable-log-legs.mjs')).runTetherShortLeg,
};

try {
  const { leg, context } = JSON.parse(await text(process.stdin));
  const run = await drivers[leg]();
  const result = await run(context);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
} catch (error) {
  process.stderr.write(`peer leg failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
