/**
 * Leg (a): the minimal raw loop. Spawns claude with Tether's argv and environment, writes the
 * user line at once (no initialize), splits stdout into lines and JSON.parses each one.
 * Turn 1 is cold (its time includes the spawn); later turns reuse the process (warm).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { rawLaunch } from './claude-setup.mjs';
import { machineBusyMs, processCpuMs, selfCpuMs } from './proc.mjs';
import { onLines } from './stdout-lines.mjs';

function userLine(prompt) {
  return `${JSON.stringify({ type: 'user', message: { role: 'user', content: prompt }, parent_tool_use_id: null, uuid: randomUUID() })}\n`;
}

export async function runRawTurns({
  claudePath,
  environment,
  workspace,
  prompt,
  turns = 2,
  timeoutMs = 120_000,
  apiPid,
}) {
  const { argv, env } = rawLaunch({ environment, providerSessionId: randomUUID() });
  const results = [];
  let current;
  let child;
  let stderr = '';

  const startTurn = (spawnIt) => {
    current = {
      apiCpuStart: processCpuMs(apiPid),
      busyStart: machineBusyMs(),
      cpuStart: selfCpuMs(),
      childCpuStart: NaN,
      start: performance.now(),
      firstDeltaMs: NaN,
      deltas: 0,
      textChars: 0,
      lines: 0,
    };
    if (spawnIt) {
      child = spawn(claudePath, argv, { cwd: workspace, env, stdio: ['pipe', 'pipe', 'pipe'] });
      current.childCpuStart = 0;
    } else {
      current.childCpuStart = processCpuMs(child.pid);
    }
    child.stdin.write(userLine(prompt));
  };

  const endTurn = (frame) => {
    const turnMs = performance.now() - current.start;
    const cpuMs = selfCpuMs() - current.cpuStart;
    const childCpuMs = processCpuMs(child.pid) - current.childCpuStart;
    const apiCpuMs = processCpuMs(apiPid) - current.apiCpuStart;
    // CPU the rest of the machine used meanwhile (other work competing for the cores).
    const foreignCpuMs = machineBusyMs() - current.busyStart - cpuMs - childCpuMs - apiCpuMs;
    results.push({
      turnMs,
      firstDeltaMs: current.firstDeltaMs,
      deltas: current.deltas,
      textChars: current.textChars,
      lines: current.lines,
      cpuMs,
      childCpuMs,
      apiCpuMs,
      foreignCpuMs,
      isError: frame.is_error === true,
    });
  };

  startTurn(true);
  const exit = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`raw loop: no result within ${timeoutMs} ms (stderr: ${stderr.slice(-500)})`));
    }, timeoutMs);
    child.stdin.on('error', () => {});
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`raw loop: could not start ${claudePath}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (results.length === turns) resolve({ code, signal });
      else
        reject(
          new Error(
            `raw loop: claude exited (${code ?? signal}) after ${results.length} of ${turns} results. stderr: ${stderr.slice(-1000)}`,
          ),
        );
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-8192);
    });
    onLines(child.stdout, (line) => {
      current.lines += 1;
      const frame = JSON.parse(line);
      if (frame.type === 'stream_event') {
        const event = frame.event;
        if (event.type === 'content_block_delta' && event.delta?.type === 'text_delta') {
          current.deltas += 1;
          current.textChars += event.delta.text.length;
          if (current.deltas === 1) current.firstDeltaMs = performance.now() - current.start;
        }
      } else if (frame.type === 'result') {
        endTurn(frame);
        // The next turn on the same (now warm) process, or EOF so the idle CLI exits.
        if (results.length < turns) startTurn(false);
        else child.stdin.end();
      }
    });
  });
  const { code } = await exit;
  const failed = results.find((result) => result.isError);
  if (failed) throw new Error('raw loop: a turn ended with an error result');
  return { turns: results, exitCode: code };
}
