/**
 * The ACP scenario: the same two prompts (a cold then a warm turn; the fake model answers each with
 * the main scenario's 2,000 text deltas) sent by a minimal ACP client over stdio to two agents, in
 * pairs whose order alternates:
 *   tether  `tether acp` (in-process runtime over SQLite, the Claude provider's cli transport);
 *   zed     @zed-industries/claude-agent-acp, the reference adapter (Agent SDK query() inside it),
 *           pointed at the same claude binary through its CLAUDE_CODE_EXECUTABLE.
 * Measured on the client side: session/prompt -> first agent_message_chunk, and -> the prompt's
 * answer; then a second session, prompted 1.5 s after session/new (a user writing the prompt); on
 * the agent side, from /proc: the agent process's own CPU per turn and its RSS (the claude processes
 * under it are counted apart: the same CLI in both).
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { claudeAgentAcpLaunch, messageChunks, startAcpAgent } from './acp-client.mjs';
import { claudeUnder, cpuOf, killLeftoverProcesses } from './claude-processes.mjs';
import { runPairs } from './paired-runs.mjs';
import { descendantsOf, memoryOf, processCpuMs } from './proc.mjs';
import { median, summarize, summarizeRatios } from './stats.mjs';

export const acpAgents = ['tether', 'zed'];
export { zedPackage } from './acp-client.mjs';
/** How long a leg may take in all, and an agent to exit once its client closed stdin. */
const legTimeoutMs = 120_000;
/**
 * A user's moment between opening a chat and sending its first prompt, for the second session of a
 * leg: what an agent does at session/new (start claude, or not) shows in that prompt's first chunk.
 */
const userWritingMs = 1_500;
const exitGraceMs = 10_000;

/** How each agent is started: the same explicit environment, the same claude binary. */
function agentLaunch(agent, { claudePath, environment, repoRoot, dataDir }) {
  if (agent === 'tether')
    return {
      argv: [path.join(repoRoot, 'packages', 'cli', 'bin', 'tether.js'), 'acp', '--data-dir', dataDir],
      env: { ...environment, TETHER_CLAUDE_PATH: claudePath },
    };
  return claudeAgentAcpLaunch({ claudePath, environment });
}

/** One leg: a fresh agent process, initialize, session/new, two prompts, then the client quits. */
export async function runAcpLeg(agent, context, { repoRoot, leg }) {
  const { workspace, prompt } = context;
  const dataDir = path.join(context.root, 'acp-data', `${agent}-${leg}`);
  await mkdir(dataDir, { recursive: true });
  const launch = agentLaunch(agent, { ...context, repoRoot, dataDir });
  const chunks = messageChunks();
  const spawnedAt = performance.now();
  const agentProcess = startAcpAgent({ ...launch, cwd: workspace, label: agent }, chunks);
  const { child, client, during } = agentProcess;
  const timer = setTimeout(agentProcess.kill, legTimeoutMs);
  try {
    await during(client.request('initialize', { protocolVersion: 1, clientCapabilities: {} }));
    const initializedAt = performance.now();
    const { result } = await during(client.request('session/new', { cwd: workspace, mcpServers: [] }));
    const sessionReadyAt = performance.now();
    const turns = [];
    for (let index = 0; index < 2; index += 1) {
      const claudeBefore = claudeUnder(child.pid);
      const agentCpu = processCpuMs(child.pid);
      const claudeCpu = cpuOf(claudeBefore.pids);
      chunks.begin(performance.now());
      const answer = await during(
        client.request('session/prompt', { sessionId: result.sessionId, prompt: [{ type: 'text', text: prompt }] }),
      );
      const turn = chunks.end();
      // Claude processes started during a cold turn are counted from their start.
      const claudeNew = claudeUnder(child.pid).pids.filter((pid) => !claudeBefore.pids.includes(pid));
      turns.push({
        stopReason: answer.result.stopReason,
        firstChunkMs: turn.firstChunkAt - turn.sentAt,
        turnMs: answer.at - turn.sentAt,
        chunks: turn.chunks,
        words: turn.text.trim().split(/\s+/).filter(Boolean).length,
        agentCpuMs: processCpuMs(child.pid) - agentCpu,
        claudeCpuMs: claudeCpu() + claudeNew.reduce((sum, pid) => sum + (processCpuMs(pid) || 0), 0),
      });
    }
    const agentMemory = memoryOf(child.pid);
    const claude = claudeUnder(child.pid);
    const processes = descendantsOf(child.pid).map((process) => process.comm);
    // A second session, prompted as a user does: a moment after it opened (not a synchronisation).
    const second = await during(client.request('session/new', { cwd: workspace, mcpServers: [] }));
    await sleep(userWritingMs);
    chunks.begin(performance.now());
    const written = await during(
      client.request('session/prompt', {
        sessionId: second.result.sessionId,
        prompt: [{ type: 'text', text: prompt }],
      }),
    );
    const writtenTurn = chunks.end();
    const promptAfterWriting = {
      stopReason: written.result.stopReason,
      firstChunkMs: writtenTurn.firstChunkAt - writtenTurn.sentAt,
      turnMs: written.at - writtenTurn.sentAt,
    };
    const exit = await agentProcess.quit(exitGraceMs);
    return {
      agent,
      startMs: initializedAt - spawnedAt,
      newSessionMs: sessionReadyAt - initializedAt,
      turns,
      promptAfterWriting,
      agentRssKb: agentMemory.rssKb,
      agentHwmKb: agentMemory.hwmKb,
      claudeRssKb: claude.rssKb,
      processes,
      exitMs: exit.ms,
      exit: exit.exit,
    };
  } finally {
    clearTimeout(timer);
    agentProcess.kill();
  }
}

function describePair(pair, legs) {
  const leg = (name) => {
    const { turns, agentRssKb } = pair[name];
    const ms = (value) => value.toFixed(0);
    return `${name} 1st chunk ${ms(turns[0].firstChunkMs)}/${ms(turns[1].firstChunkMs)} turn ${ms(turns[0].turnMs)}/${ms(turns[1].turnMs)} ms agent CPU ${ms(turns[1].agentCpuMs)} ms RSS ${ms(agentRssKb / 1024)} MiB`;
  };
  return `${legs.map(leg).join('  ')}  other load ${pair.otherLoadCores.toFixed(2)}`;
}

export async function measureAcp(context, { repetitions, gate, log, repoRoot }) {
  const home = context.environment.HOME;
  let legs = 0;
  const run = async (agent) => {
    legs += 1;
    const result = await runAcpLeg(agent, context, { repoRoot, leg: legs });
    result.leftover = await killLeftoverProcesses(home);
    return result;
  };
  // Warm-up (not counted): each agent's files in the page cache, the CLI's first start in this HOME.
  const warmUp = {};
  for (const agent of acpAgents) warmUp[agent] = await run(agent);
  log(`bench: acp warm-up ${describePair({ ...warmUp, otherLoadCores: Number.NaN }, acpAgents)}`);
  const pairs = await runPairs({ legs: acpAgents, repetitions, gate, label: 'acp', log, describePair, run });
  return { pairs, warmUp };
}

/** Each agent's distribution of one figure and the paired ratios tether/zed. */
function paired(pairs, pick) {
  const usable = pairs.filter((pair) => Number.isFinite(pick(pair.tether)) && Number.isFinite(pick(pair.zed)));
  return {
    zed: summarize(usable.map((pair) => pick(pair.zed))),
    tether: summarize(usable.map((pair) => pick(pair.tether))),
    ratio: summarizeRatios(usable.map((pair) => pick(pair.tether) / pick(pair.zed))),
  };
}

export function summarizeAcp({ pairs, warmUp }) {
  const cold = (leg) => leg.turns[0];
  const warm = (leg) => leg.turns[1];
  const each = (pick) =>
    Object.fromEntries(acpAgents.map((agent) => [agent, [...new Set(pairs.map((pair) => pick(pair[agent])))]]));
  return {
    repetitions: pairs.length,
    quietPairs: pairs.filter((pair) => pair.quiet).length,
    otherLoadCores: summarize(pairs.map((pair) => pair.otherLoadCores)),
    start: paired(pairs, (leg) => leg.startMs),
    newSession: paired(pairs, (leg) => leg.newSessionMs),
    coldFirstChunk: paired(pairs, (leg) => cold(leg).firstChunkMs),
    coldTurn: paired(pairs, (leg) => cold(leg).turnMs),
    warmFirstChunk: paired(pairs, (leg) => warm(leg).firstChunkMs),
    warmTurn: paired(pairs, (leg) => warm(leg).turnMs),
    writtenFirstChunk: paired(pairs, (leg) => leg.promptAfterWriting.firstChunkMs),
    agentCpuCold: paired(pairs, (leg) => cold(leg).agentCpuMs),
    agentCpuWarm: paired(pairs, (leg) => warm(leg).agentCpuMs),
    claudeCpuWarm: paired(pairs, (leg) => warm(leg).claudeCpuMs),
    agentRss: paired(pairs, (leg) => leg.agentRssKb),
    agentPeak: paired(pairs, (leg) => leg.agentHwmKb),
    claudeRss: paired(pairs, (leg) => leg.claudeRssKb),
    exitMs: paired(pairs, (leg) => leg.exitMs),
    stopReasons: each((leg) => [...leg.turns, leg.promptAfterWriting].map((turn) => turn.stopReason).join('/')),
    chunks: each((leg) => warm(leg).chunks),
    words: each((leg) => warm(leg).words),
    processes: each((leg) => leg.processes.join('+') || 'none'),
    exits: each((leg) => leg.exit),
    leftoverProcesses: pairs.reduce((sum, pair) => sum + pair.tether.leftover + pair.zed.leftover, 0),
    medianChunksPerTurn: median(pairs.flatMap((pair) => acpAgents.map((agent) => warm(pair[agent]).chunks))),
    warmUp,
    pairs,
  };
}
