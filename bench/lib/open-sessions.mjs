/**
 * The sessions scenario (opt-in: --scenarios sessions): 1,000 open sessions in one daemon, most of them
 * idle with no agent process, and 50 turns at once on random ones under the process limit.
 *
 * A daemon in its own process (bench/daemon-server.mjs, as the daemon scenario starts it; publish
 * stamps on) with the real claude against the fake API, process limit P (default 8) and a short idle
 * release (default 1 s: the provider's idleReleaseMs, which stops a session's idle claude process;
 * the next turn resumes the conversation in a new one):
 * 1. memory with 0 sessions, N opened (default 1,000; 20 at a time), memory again: both after a full GC
 *    in the daemon (--expose-gc), so (RSS with N - RSS with 0) / N is what an idle open session costs;
 * 2. listing (first page; the whole listing page by page) and snapshot latency with N open;
 * 3. T turns at once (default 50, each a reply of 100 text deltas), one each on T distinct sessions
 *    picked at random, each followed by an SSE subscription opened first. The turns over P wait in
 *    the provider's queue: each says where it stands with run.queued {position}. Meanwhile listing
 *    and snapshot are sampled, and the claude processes counted (never more than P). Fan-out: every
 *    event the daemon published on those sessions (stamped inside the daemon on CLOCK_MONOTONIC)
 *    against when its follower here received it. Event-loop delay of the daemon over the turns: a
 *    perf_hooks histogram in the daemon (2 ms sampling, over IPC) and /v1/metrics's
 *    nodejs_eventloop_lag_p99_seconds (prom-client, 100 ms sampling; reset at every scrape);
 * 4. every one of those sessions' processes released (session.process_stopped), memory again;
 * 5. resume: R released sessions, one at a time, submit -> first delta on the follower (a new claude
 *    with --resume), each paired with a cold first turn on a session never used;
 * 6. nothing lost: every turn succeeded; for every used session the follower's seqs and a fresh raw
 *    SSE replay are exactly 1..lastSeq; the whole listing has N sessions; after the daemon stops, no
 *    claude process with the bench HOME is left (killed and counted if any).
 */
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createTetherClient } from '@tether/client';
import { claudeUnder, killLeftoverProcesses } from './claude-processes.mjs';
import { startDaemonProcess } from './daemon-process.mjs';
import { openMany, pickDistinct, settledMemory, spread } from './load-scenario.mjs';
import { monotonicMs } from './monotonic-clock.mjs';
import { checkEventLogs, measureReads, sampleDuringTurns, scrapeMetrics } from './open-sessions-reads.mjs';
import { commandLine, processTreeCpuMs } from './proc.mjs';
import { SHORT, turnPrompt } from './scripted-prompts.mjs';
import { round } from './stats.mjs';
import { EventWatch } from './tether-harness.mjs';

const turnDeltas = 100;

/** A followed session: its SSE watch and its daemon-side publish stamps switched on. */
async function follow(daemon, client, sessionId) {
  await daemon.request({ type: 'watch', sessionId });
  const watch = new EventWatch(client, sessionId);
  // The replay of session.opened shows the stream is open.
  await watch.waitFor(() => true, 0, 30_000);
  return { sessionId, watch };
}

/** One turn on a followed session: submit -> first delta and -> run.completed (must succeed), with its events. */
async function followedTurn(client, { sessionId, watch }, text, timeoutMs) {
  const mark = watch.mark();
  const started = performance.now();
  const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const ofRun = (type) => (event) => event.type === type && event.runId === runId;
  const delta = watch.waitFor(ofRun('run.message_delta'), mark, timeoutMs);
  delta.catch(() => {});
  // Read as soon as the process is announced: with a short idle release it may be gone by the turn's end.
  const argv = watch
    .waitFor((event) => event.type === 'session.process_started', mark, timeoutMs)
    .then(
      (entry) => commandLine(entry.event.pid) ?? [],
      () => [],
    );
  const completed = await watch.waitFor(ofRun('run.completed'), mark, timeoutMs);
  if (completed.event.outcome !== 'succeeded')
    throw new Error(
      `sessions scenario: a run ended ${completed.event.outcome}: ${JSON.stringify(completed.event.error ?? null)}`,
    );
  const events = watch.events.slice(mark).map((entry) => entry.event);
  const at = (type) => events.find((event) => event.type === type && (event.runId ?? runId) === runId);
  const processStarted = events.find((event) => event.type === 'session.process_started');
  return {
    runId,
    firstDeltaMs: (await delta).at - started,
    completedMs: completed.at - started,
    queuedPosition: at('run.queued')?.position ?? null,
    waitForProcessMs: processStarted ? Date.parse(processStarted.at) - Date.parse(at('run.started').at) : null,
    argv: processStarted ? await argv : [],
    completedMark: watch.events.indexOf(completed) + 1,
  };
}

/** Publish (in the daemon) → receipt by the follower (here), per event, over every followed session. */
async function fanOutLatencies(daemon, followed) {
  // EventWatch stamps with performance.now(); both it and the daemon's stamps read CLOCK_MONOTONIC.
  const toMonotonic = monotonicMs() - performance.now();
  const latencies = [];
  let missing = 0;
  for (const { sessionId, watch } of followed) {
    const received = new Map(watch.events.map((entry) => [entry.event.seq, entry.at + toMonotonic]));
    const { published } = await daemon.request({ type: 'stamps', sessionId });
    for (const [seq, , at] of published) {
      const receivedAt = received.get(seq);
      if (receivedAt === undefined) missing += 1;
      else latencies.push(receivedAt - at);
    }
  }
  return { ...spread(latencies), missing };
}

async function loopDelay(daemon, type) {
  const answer = await daemon.request({ type });
  return answer.p99 === undefined
    ? null
    : { p50: round(answer.p50, 2), p99: round(answer.p99, 2), max: round(answer.max, 1) };
}

/**
 * The CPU the agents (the daemon's descendants) and the daemon used over the turns, and the agents'
 * share of the machine: how much of every core they had. The machine's speed moves from run to run
 * (the same claude starts take 25 % more CPU in one run than in another), so the share, not the wall
 * time, shows what the host's own work took from the agents.
 */
function cpuOver(before, after, wallMs, turns) {
  const agentsMs = after.descendantsMs - before.descendantsMs;
  const daemonMs = after.ownMs - before.ownMs;
  const cores = availableParallelism();
  return {
    agentsMs: round(agentsMs),
    daemonMs: round(daemonMs),
    agentsMsPerTurn: round(agentsMs / turns),
    daemonMsPerTurn: round(daemonMs / turns, 1),
    agentsShareOfCores: round(agentsMs / (wallMs * cores), 3),
    cores,
  };
}

const perSession = (after, before, count) => ({
  rssKb: round((after.rssKb - before.rssKb) / count, 1),
  heapKb: round((after.heapUsedKb - before.heapUsedKb) / count, 1),
});

export async function measureOpenSessions(
  context,
  { sessions, turns, maxProcesses = 8, resumes = 5, idleReleaseMs = 1_000, agentNice, repoRoot, log },
) {
  if (turns + resumes > sessions)
    throw new Error('sessions scenario: the turns and resumes need at least as many sessions (--open-sessions)');
  const home = context.environment.HOME;
  const daemon = await startDaemonProcess({
    repoRoot,
    claudePath: context.claudePath,
    environment: context.environment,
    maxProcesses,
    stamps: true,
    idleReleaseMs,
    agentNice,
  });
  const followed = [];
  let stopped = null;
  try {
    const client = createTetherClient({ url: daemon.url, token: daemon.token });
    const none = await settledMemory(daemon);

    await daemon.request({ type: 'loop-start' });
    const openStarted = performance.now();
    const ids = await openMany(client, context.workspace, sessions);
    const openMs = performance.now() - openStarted;
    const openLoop = await loopDelay(daemon, 'loop-stop');
    const open = await settledMemory(daemon);
    const idle = perSession(open, none, sessions);
    log(
      `bench: sessions: ${sessions} opened in ${round(openMs / 1000, 2)} s; daemon RSS ${round(none.rssKb / 1024)} -> ${round(open.rssKb / 1024)} MiB after GC = ${idle.rssKb} KiB per idle open session (heap ${idle.heapKb} KiB)`,
    );

    const reads = await measureReads(client, ids);
    log(
      `bench: sessions: with ${sessions} open: first page p50 ${reads.firstPage.p50} p99 ${reads.firstPage.p99} ms; whole listing (50 a page) p50 ${reads.fullListing.p50} ms, (500 a page) p50 ${reads.fullListingLargestPages.p50} ms; snapshot p50 ${reads.snapshot.p50} p99 ${reads.snapshot.p99} ms`,
    );

    const picked = pickDistinct(turns + resumes, sessions).map((index) => ids[index]);
    const [chosen, spare] = [picked.slice(0, turns), picked.slice(turns)];
    for (const sessionId of chosen) followed.push(await follow(daemon, client, sessionId));
    await scrapeMetrics(daemon);
    await daemon.request({ type: 'loop-start' });
    let running = true;
    const sampling = sampleDuringTurns(client, ids, {
      running: () => running,
      countProcesses: () => claudeUnder(daemon.pid).count,
    });
    const cpuBefore = processTreeCpuMs(daemon.pid);
    const burstStarted = performance.now();
    const results = await Promise.all(
      followed.map((session) => followedTurn(client, session, turnPrompt(turnDeltas), 600_000)),
    ).finally(() => {
      running = false;
    });
    const burstMs = performance.now() - burstStarted;
    const burstCpu = cpuOver(cpuBefore, processTreeCpuMs(daemon.pid), burstMs, turns);
    const burstLoop = await loopDelay(daemon, 'loop-stop');
    const metrics = await scrapeMetrics(daemon);
    const duringTurns = await sampling;
    const fanOut = await fanOutLatencies(daemon, followed);
    const queued = results.filter((result) => result.queuedPosition !== null);
    const positions = [...new Set(queued.map((result) => result.queuedPosition))].sort((a, b) => a - b);
    log(
      `bench: sessions: ${turns} turns at once, ${maxProcesses} processes: all completed in ${round(burstMs / 1000, 2)} s; ${queued.length} queued (positions ${positions[0] ?? '-'}..${positions.at(-1) ?? '-'}, ${positions.length} distinct); ` +
        `fan-out publish -> follower p50 ${fanOut.p50} p99 ${fanOut.p99} ms (${fanOut.count} events, ${fanOut.missing} missing); event-loop delay p99 ${burstLoop?.p99} ms (metrics ${round(metrics.nodejs_eventloop_lag_p99_seconds * 1000, 1)} ms); most claude processes ${duringTurns.mostProcesses}; CPU: the agents ${round(burstCpu.agentsMs / 1000, 1)} s, the daemon ${round(burstCpu.daemonMs / 1000, 1)} s, the agents had ${round(burstCpu.agentsShareOfCores * 100, 1)} % of the cores`,
    );

    // Every followed session's process goes after idleReleaseMs: then all N sessions are idle with none.
    await Promise.all(
      followed.map(({ watch }, index) =>
        watch.waitFor((event) => event.type === 'session.process_stopped', results[index].completedMark, 60_000),
      ),
    );
    const stoppedReasons = [
      ...new Set(
        followed.flatMap(({ watch }) =>
          watch.events
            .filter((entry) => entry.event.type === 'session.process_stopped')
            .map((entry) => entry.event.reason),
        ),
      ),
    ];
    const released = await settledMemory(daemon);
    const claudeAfterRelease = claudeUnder(daemon.pid).count;
    const afterTurns = perSession(released, none, sessions);
    log(
      `bench: sessions: every process released (${stoppedReasons.join(', ')}); claude processes left ${claudeAfterRelease}; daemon RSS ${round(released.rssKb / 1024)} MiB = ${afterTurns.rssKb} KiB per idle open session (heap ${afterTurns.heapKb} KiB)`,
    );

    // Resume (a released session's next turn) against a cold first turn, alternating, one at a time.
    const pairs = [];
    for (let index = 0; index < resumes; index += 1) {
      const resumed = await followedTurn(client, followed[index], SHORT, 60_000);
      const fresh = await follow(daemon, client, spare[index]);
      followed.push(fresh);
      const cold = await followedTurn(client, fresh, SHORT, 60_000);
      pairs.push({
        resumeMs: resumed.firstDeltaMs,
        coldMs: cold.firstDeltaMs,
        resumedWithFlag: resumed.argv.includes('--resume'),
      });
      results.push(resumed, cold);
    }
    const resume = {
      firstDelta: spread(pairs.map((pair) => pair.resumeMs)),
      coldFirstDelta: spread(pairs.map((pair) => pair.coldMs)),
      ratio: spread(pairs.map((pair) => pair.resumeMs / pair.coldMs)),
      withResumeFlag: pairs.filter((pair) => pair.resumedWithFlag).length,
      pairs: pairs.length,
    };
    log(
      `bench: sessions: resume (released session's next turn -> first delta) p50 ${resume.firstDelta.p50} ms vs cold first turn p50 ${resume.coldFirstDelta.p50} ms (${resume.withResumeFlag} of ${resume.pairs} claude started with --resume)`,
    );

    const logs = await checkEventLogs(daemon, client, followed);
    const claudeBeforeStop = claudeUnder(daemon.pid).count;
    // The followers end before the daemon, or they would start reconnecting.
    for (const { watch } of followed.splice(0)) await watch.stop();
    stopped = await daemon.stop();
    const orphans = await killLeftoverProcesses(home);
    const lost = {
      turnsSucceeded: results.length,
      turnsSubmitted: turns + 2 * resumes,
      brokenLogs: logs.broken,
      sessionsChecked: logs.sessions,
      eventsChecked: logs.events,
      fanOutMissing: fanOut.missing,
      listed: reads.listed,
      claudeBeforeStop,
      orphansAfterStop: orphans,
      daemonExit: { code: stopped.code, signal: stopped.signal, ms: round(stopped.ms) },
    };
    log(
      `bench: sessions: ${lost.turnsSucceeded} of ${lost.turnsSubmitted} turns succeeded; ${logs.events} events over ${logs.sessions} sessions, ${logs.broken.length} with a seq gap; listing had ${reads.listed.default}/${reads.listed.expected}; claude left after the daemon stopped: ${orphans}`,
    );
    return {
      sessions,
      turns,
      maxProcesses,
      idleReleaseMs,
      agentNice: agentNice ?? 'default',
      turnDeltas,
      openMs: round(openMs),
      memory: {
        noneRssKb: none.rssKb,
        openRssKb: open.rssKb,
        releasedRssKb: released.rssKb,
        perIdleSession: idle,
        perIdleSessionAfterTurns: afterTurns,
      },
      reads,
      duringTurns,
      burst: {
        allCompletedMs: round(burstMs),
        turnCompleted: spread(results.slice(0, turns).map((result) => result.completedMs)),
        waitForProcess: spread(results.slice(0, turns).map((result) => result.waitForProcessMs)),
        queued: { count: queued.length, positions },
        cpu: burstCpu,
      },
      fanOut,
      loopDelay: {
        opening: openLoop,
        turns: burstLoop,
        metricsP99Ms: round(metrics.nodejs_eventloop_lag_p99_seconds * 1000, 1),
        metricsMaxMs: round(metrics.nodejs_eventloop_lag_max_seconds * 1000, 1),
      },
      released: { reasons: stoppedReasons, claudeLeft: claudeAfterRelease },
      resume,
      lost,
    };
  } finally {
    for (const { watch } of followed) await watch.stop();
    if (!stopped) await daemon.stop();
  }
}
