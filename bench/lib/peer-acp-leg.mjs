/**
 * The peers scenario's ACP leg, run in its own host process: the reference adapter
 * @zed-industries/claude-agent-acp (the Agent SDK's query() inside it) as a child process of the
 * host, driven by the bench's minimal ACP client (acp-client.mjs) over its stdio. The adapter gets
 * the raw loop's environment and the bench's claude binary through CLAUDE_CODE_EXECUTABLE (its own
 * override); the claude process it starts is read from /proc and must be that binary. The adapter
 * has no way to start a claude process ahead of a session, so there is no prewarmed figure.
 */
import { performance } from 'node:perf_hooks';
import { claudeAgentAcpLaunch, messageChunks, startAcpAgent } from './acp-client.mjs';
import { cpuMs, measureInterrupts, measureShortTurns, measureSteadyTurns } from './peer-turn-timer.mjs';
import { childrenOf, commandLine, memoryOf, processCpuMs } from './proc.mjs';

/**
 * The adapter does not exit when its client closes stdin (the ACP scenario waited 10 s for it every
 * time), and its exit is not measured here: it is killed after a second, its claude child then ends.
 */
const exitGraceMs = 1_000;

export async function runAcpPeerLeg(context) {
  const { claudePath, rawEnv, workspace, prompt, short, slow } = context;
  const chunks = messageChunks();
  const startedAt = performance.now();
  const adapter = startAcpAgent(
    { ...claudeAgentAcpLaunch({ claudePath, environment: rawEnv }), cwd: workspace, label: 'claude-agent-acp' },
    chunks,
  );
  const { child, client, during } = adapter;
  const result = {};
  try {
    await during(client.request('initialize', { protocolVersion: 1, clientCapabilities: {} }));
    // The adapter process, like the SDK imported or Tether's runtime started, is ready before the clock.
    result.adapterStartMs = performance.now() - startedAt;
    /** One prompt: sent → its answer; { firstDeltaMs, turnMs, deltas, stopReason }. */
    const turn = async (sessionId, text, { start = performance.now(), onFirstChunk } = {}) => {
      chunks.begin(start, { onFirstChunk });
      const answer = await during(client.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] }));
      const followed = chunks.end();
      return {
        firstDeltaMs: followed.firstChunkAt - start,
        turnMs: answer.at - start,
        deltas: followed.chunks,
        stopReason: answer.result.stopReason,
        endedAt: answer.at,
      };
    };
    const expectEndTurn = (ended, name) => {
      if (ended.stopReason !== 'end_turn')
        throw new Error(`claude-agent-acp: the ${name} turn ended ${ended.stopReason}`);
      return { firstDeltaMs: ended.firstDeltaMs, turnMs: ended.turnMs, deltas: ended.deltas };
    };

    // (a) cold: session/new (the adapter starts claude and initializes it) + the prompt → first chunk, → answer.
    const start = performance.now();
    const { result: session } = await during(client.request('session/new', { cwd: workspace, mcpServers: [] }));
    result.newSessionMs = performance.now() - start;
    const claude = childrenOf(child.pid)
      .map((candidate) => commandLine(candidate.pid))
      .find(Boolean);
    if (claude?.[0] !== claudePath)
      throw new Error(
        `claude-agent-acp started ${claude?.[0] ?? 'no process'}, not the bench's claude (${claudePath})`,
      );
    result.argv = claude.slice(1);
    result.cold = expectEndTurn(await turn(session.sessionId, prompt, { start }), 'cold');
    // (d) RSS after one turn: the host and the adapter, each reported.
    result.hostRssKb = process.memoryUsage().rss / 1024;
    result.adapterRssKb = memoryOf(child.pid).rssKb;
    result.rssAfterOneTurnKb = result.hostRssKb + result.adapterRssKb;
    // (b) the warm 2,000-delta turn on its own, with the CPU of the host and of the adapter (not claude's).
    const hostCpu = process.cpuUsage();
    const adapterCpu = processCpuMs(child.pid);
    const warm = expectEndTurn(await turn(session.sessionId, prompt), 'warm');
    const hostCpuMs = cpuMs(process.cpuUsage(hostCpu));
    const adapterCpuMs = processCpuMs(child.pid) - adapterCpu;
    result.warm = { ...warm, hostCpuMs, adapterCpuMs, cpuMs: hostCpuMs + adapterCpuMs };
    result.steady = await measureSteadyTurns(
      async () => expectEndTurn(await turn(session.sessionId, prompt), 'steady'),
      () => cpuMs(process.cpuUsage()) + processCpuMs(child.pid),
    );
    // (c) short turns on the same process.
    const shortTurn = async () => expectEndTurn(await turn(session.sessionId, short), 'short');
    result.warmShort = await measureShortTurns(shortTurn);
    // (f) session/cancel when the first chunk of a slow turn arrives → the prompt's answer (cancelled).
    Object.assign(
      result,
      // No own parts: the host talks ACP to the adapter, and the adapter's own stdio to claude is out of sight.
      await measureInterrupts(async () => {
        let cancelAt;
        const cancelled = await turn(session.sessionId, slow, {
          onFirstChunk: () => {
            cancelAt = performance.now();
            client.notify('session/cancel', { sessionId: session.sessionId });
          },
        });
        if (cancelled.stopReason !== 'cancelled')
          throw new Error(`claude-agent-acp: the cancelled turn ended ${cancelled.stopReason}`);
        return { startedAt: cancelAt, endedAt: cancelled.endedAt };
      }, shortTurn),
    );
    // (g) the adapter's second session: session/new starts another claude (the adapter has no way to
    // end the first one's, which stays idle), cold, in the same folder.
    const secondStart = performance.now();
    const { result: second } = await during(client.request('session/new', { cwd: workspace, mcpServers: [] }));
    result.secondCold = expectEndTurn(await turn(second.sessionId, prompt, { start: secondStart }), 'second cold');
    const exit = await adapter.quit(exitGraceMs);
    result.adapterExit = exit.exit;
    return result;
  } finally {
    adapter.kill();
  }
}
