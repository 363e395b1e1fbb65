// One leg of the transport scenario (bench/lib/transport-comparison.mjs) in a fresh Node process:
// the main scenario's turns (bench/lib/tether-turn.mjs) through a Claude provider with the given
// transport. Its own process, so its RSS is this transport's alone: once the bench process has
// imported the Agent SDK, every later leg there would carry it, whichever its transport.
// Configuration: BENCH_TRANSPORT_CONFIG = JSON {transport, claudePath, environment, workspace, prompt, apiPid, inspectChild}.
// Prints one JSON line (the turns, and the memory read after the last turn while the agent process
// is still alive) on stdout, then returns; the process exits by itself once nothing holds it open.
import { claudeUnder } from './lib/claude-processes.mjs';
import { heapAfterGarbageCollection } from './lib/garbage-collection.mjs';
import { descendantsOf, memoryOf, rssKb } from './lib/proc.mjs';
import { runTetherTurns } from './lib/tether-turn.mjs';

const config = JSON.parse(process.env.BENCH_TRANSPORT_CONFIG ?? '{}');
// The host with Tether's modules loaded, before a runtime exists (the Agent SDK loads with the first sdk session).
const baselineRssKb = rssKb();

const result = await runTetherTurns({
  ...config,
  turns: 2,
  provider: { transport: config.transport },
  beforeShutdown: () => {
    // Read before the collection below, which would shrink the heap's share of the RSS.
    const host = memoryOf(process.pid);
    const agent = claudeUnder(process.pid);
    return {
      baselineRssKb,
      hostRssKb: host.rssKb,
      hostHwmKb: host.hwmKb,
      agentRssKb: agent.rssKb,
      agentHwmKb: agent.hwmKb,
      agentProcesses: descendantsOf(process.pid).map((child) => child.comm),
      hostHeapBytes: heapAfterGarbageCollection(),
    };
  },
});
process.stdout.write(
  `${JSON.stringify({ ...result, turns: result.turns.map((turn) => ({ ...turn, batchSizes: undefined })) })}\n`,
);
