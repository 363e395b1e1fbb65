/**
 * Leg (a): the minimal raw loop. Spawns claude with Tether's argv and environment, writes the
 * user line at once (no initialize), splits stdout into lines and JSON.parses each one.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { rawLaunch } from './claude-setup.mjs';
import { machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';

export async function runRawTurn({ claudePath, environment, workspace, prompt, timeoutMs = 120_000, apiPid }) {
  const { argv, env } = rawLaunch({ environment, providerSessionId: randomUUID() });
  const userLine = `${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt }, parent_tool_use_id: null, uuid: randomUUID() })}\n`;

  const apiCpuStart = processCpuMs(apiPid);
  const busyStart = machineBusyMs();
  const cpuStart = selfCpuMs();
  const start = performance.now();
  const child = spawn(claudePath, argv, { cwd: workspace, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.on('error', () => {});
  child.stdin.write(userLine);

  let firstDeltaMs = NaN;
  let turnMs = NaN;
  let deltas = 0;
  let lines = 0;
  let result = null;
  let childCpuMs = NaN;
  let cpuMs = NaN;
  let apiCpuMs = NaN;
  let foreignCpuMs = NaN;
  let stderr = '';
  let partial = '';

  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`raw loop: no result within ${timeoutMs} ms (stderr: ${stderr.slice(-500)})`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`raw loop: could not start ${claudePath}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (result) resolve({ code, signal });
      else reject(new Error(`raw loop: claude exited (${code ?? signal}) without a result. stderr: ${stderr.slice(-1000)}`));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-8192);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      let text = partial + chunk;
      let newline = text.indexOf('\n');
      let from = 0;
      while (newline !== -1) {
        const line = text.slice(from, newline);
        from = newline + 1;
        newline = text.indexOf('\n', from);
        if (line.length === 0) continue;
        lines += 1;
        const frame = JSON.parse(line);
        if (frame.type === 'stream_event') {
          const event = frame.event;
          if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta') {
            deltas += 1;
            if (deltas === 1) firstDeltaMs = performance.now() - start;
          }
        } else if (frame.type === 'result' && !result) {
          turnMs = performance.now() - start;
          cpuMs = selfCpuMs() - cpuStart;
          childCpuMs = processCpuMs(child.pid);
          apiCpuMs = processCpuMs(apiPid) - apiCpuStart;
          // CPU the rest of the machine used meanwhile (other work competing for the 2 cores).
          foreignCpuMs = machineBusyMs() - busyStart - cpuMs - childCpuMs - apiCpuMs;
          result = frame;
          // The turn is over: EOF lets an idle CLI exit.
          child.stdin.end();
        }
      }
      partial = text.slice(from);
      text = '';
    });
  });
  const exit = await done;
  if (result.is_error) throw new Error(`raw loop: the turn ended with an error result: ${JSON.stringify(result).slice(0, 500)}`);
  return { firstDeltaMs, turnMs, deltas, lines, cpuMs, childCpuMs, apiCpuMs, foreignCpuMs, exitCode: exit.code, exitMs: performance.now() - start };
}
