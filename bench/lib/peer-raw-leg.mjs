/**
 * The peers scenario's raw leg, run in its own host process: the least a host must do (spawn the
 * CLI with Tether's argv and environment, split stdout into lines, JSON.parse each one), so its
 * CPU and RSS are the floor the other drivers are measured against. It imports nothing heavy.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { withFreshSessionId } from './fresh-session-id.mjs';
import { onLines } from './stdout-lines.mjs';
import {
  cpuMs,
  isTextDeltaFrame,
  measureInterrupts,
  measureShortTurns,
  measureSteadyTurns,
  peerTurnTimer,
} from './peer-turn-timer.mjs';
import { OwnParts } from './stdio-timestamps.mjs';
import { spareSettledMs, waitForIdleSpare } from './warm-pool.mjs';

function startClaude({ claudePath, rawArgv, rawEnv }, { cwd, extraArgs = [] }) {
  const child = spawn(claudePath, [...rawArgv, ...extraArgs], { cwd, env: rawEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  const timer = peerTurnTimer();
  const responses = new Map();
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  child.stdin.on('error', () => {});
  const exited = new Promise((resolve) => child.once('exit', resolve));
  exited.then(() => timer.fail(new Error(`raw claude exited during the leg: ${stderr.slice(-800)}`)));
  onLines(child.stdout, (line) => {
    const frame = JSON.parse(line);
    if (frame.type === 'stream_event') {
      if (isTextDeltaFrame(frame)) timer.delta();
    } else if (frame.type === 'result') timer.result(frame.is_error === true ? frame : null);
    else if (frame.type === 'control_response') responses.get(frame.response?.request_id)?.(frame.response);
  });
  const send = (message) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const user = (text) => ({
    type: 'user',
    message: { role: 'user', content: text },
    parent_tool_use_id: null,
    uuid: randomUUID(),
  });
  return {
    child,
    timer,
    send,
    user,
    request(request) {
      const id = `peer_${randomUUID()}`;
      const answered = new Promise((resolve) => responses.set(id, resolve));
      send({ type: 'control_request', request_id: id, request });
      return answered;
    },
    async dispose() {
      child.stdin.end();
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(kill);
    },
  };
}

export async function runRawPeerLeg(context) {
  const { workspace, prompt, short, slow } = context;
  const result = {};
  // (a) cold: spawn + the prompt → first delta, → result; (d) RSS after it; (b, c) a warm turn.
  const start = performance.now();
  const claude = startClaude(context, { cwd: workspace });
  const cold = claude.timer.turn(start);
  claude.send(claude.user(prompt));
  result.cold = await cold;
  result.rssAfterOneTurnKb = process.memoryUsage().rss / 1024;
  const cpu = process.cpuUsage();
  const warmStart = performance.now();
  const warm = claude.timer.turn(warmStart);
  claude.send(claude.user(prompt));
  result.warm = { ...(await warm), cpuMs: cpuMs(process.cpuUsage(cpu)) };
  result.steady = await measureSteadyTurns(() => {
    const turn = claude.timer.turn(performance.now());
    claude.send(claude.user(prompt));
    return turn;
  });
  const shortTurn = () => {
    const turn = claude.timer.turn(performance.now());
    claude.send(claude.user(short));
    return turn;
  };
  const ownParts = new OwnParts();
  result.warmShort = await measureShortTurns(shortTurn, ownParts);
  // (f) interrupt right after the first delta of a slow turn → its result.
  Object.assign(
    result,
    await measureInterrupts(
      async (beforeStop) => {
        let startedAt;
        const interrupted = claude.timer.turn(performance.now(), {
          onFirstDelta: () => {
            beforeStop();
            startedAt = performance.now();
            claude.request({ subtype: 'interrupt', cancel_queued: true });
          },
          allowError: true,
        });
        claude.send(claude.user(slow));
        // Awaited first: startedAt is set only when the first delta arrives.
        const { endedAt } = await interrupted;
        return { startedAt, endedAt };
      },
      shortTurn,
      ownParts,
    ),
  );
  result.ownParts = ownParts.medians();
  await claude.dispose();
  result.secondCold = await measureRawSecondSession(context);
  result.prewarmed = await measureRawPrewarmed(context);
  return result;
}

/**
 * (g) the host's second session: a new claude process (its first one ended), cold, in the same
 * folder; the host's own code has run once already.
 */
async function measureRawSecondSession(context) {
  const { workspace, prompt } = context;
  const start = performance.now();
  const claude = startClaude({ ...context, rawArgv: withFreshSessionId(context.rawArgv) }, { cwd: workspace });
  const turn = claude.timer.turn(start);
  claude.send(claude.user(prompt));
  const second = await turn;
  await claude.dispose();
  return second;
}

/**
 * (e) a parked spare (--await-claim), initialized and idle, claimed for a folder never seen before:
 * the claim (the folder only, as Tether and the SDK send it) and the user line written together.
 * No workspace_trust: a print-mode process needs none, and recording it makes the claim write the
 * CLI's config file on the way to the first delta.
 */
export async function measureRawPrewarmed(context) {
  const { short } = context;
  const parking = `${context.root}/parking-raw-${randomUUID()}`;
  const folder = `${context.root}/fresh-raw-${randomUUID()}`;
  await Promise.all([mkdir(parking, { recursive: true }), mkdir(folder, { recursive: true })]);
  const spare = startClaude(context, { cwd: parking, extraArgs: ['--await-claim'] });
  await spare.request({ subtype: 'initialize' });
  await waitForIdleSpare({ apiPid: context.apiPid, idleMs: spareSettledMs });
  const claimStart = performance.now();
  const claimedTurn = spare.timer.turn(claimStart);
  spare.send({
    type: 'control_request',
    request_id: `claim_${randomUUID()}`,
    request: { subtype: 'claim_session', cwd: folder },
  });
  spare.send(spare.user(short));
  const prewarmed = await claimedTurn;
  await spare.dispose();
  return prewarmed;
}
