/**
 * A raw claude process for the lifecycle scenarios: spawned with Tether's exact argv and
 * environment (as the raw loop is), stdout split into JSON lines, each kept with its arrival time
 * so a scenario can wait for "the first frame like this after that mark" without races.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { rawLaunch } from './claude-setup.mjs';
import { onLines } from './stdout-lines.mjs';
import { TimedEntries } from './timed-entries.mjs';

export const isTextDelta = (frame) =>
  frame.type === 'stream_event' &&
  frame.event?.type === 'content_block_delta' &&
  frame.event.delta?.type === 'text_delta';
export const isResult = (frame) => frame.type === 'result';

export class RawClaude {
  constructor({ claudePath, environment, workspace }) {
    const { argv, env } = rawLaunch({ environment, providerSessionId: randomUUID() });
    this.spawnedAt = performance.now();
    this.child = spawn(claudePath, argv, { cwd: workspace, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.pid = this.child.pid;
    this.log = new TimedEntries((entry) => entry.frame);
    /** Every stdout frame: { frame, at }. */
    this.frames = this.log.entries;
    this.stderr = '';
    this.exitInfo = null;
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal, at: performance.now() };
        resolve(this.exitInfo);
      });
    });
    this.closed = new Promise((resolve) => this.child.once('close', () => resolve({ at: performance.now() })));
    this.closed.then(() =>
      this.log.end(
        new Error(
          `raw claude ${this.pid} exited (${this.exitInfo?.code ?? this.exitInfo?.signal}) while waiting; stderr: ${this.stderr.slice(-500)}`,
        ),
      ),
    );
    this.child.on('error', () => {});
    this.child.stdin.on('error', () => {});
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk) => {
      this.stderr = (this.stderr + chunk).slice(-8192);
    });
    onLines(this.child.stdout, (line) => this.log.add({ frame: JSON.parse(line), at: performance.now() }));
  }

  /** Where the frames seen so far end: pass it to waitFor to see only later ones. */
  mark() {
    return this.log.mark();
  }

  /** The first frame at or after `from` that matches: { frame, at }. */
  waitFor(predicate, from, timeoutMs = 60_000) {
    if (this.exitInfo && !this.frames.slice(from).some((entry) => predicate(entry.frame)))
      return Promise.reject(new Error(`raw claude ${this.pid} has exited`));
    return this.log.waitFor(
      predicate,
      from,
      timeoutMs,
      () => `raw claude: no matching frame within ${timeoutMs} ms; stderr: ${this.stderr.slice(-500)}`,
    );
  }

  send(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Writes a user line; returns its uuid. */
  sendUser(text) {
    const uuid = randomUUID();
    this.send({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, uuid });
    return uuid;
  }

  /** Writes the CLI's interrupt control request (the one Tether sends); returns its request id. */
  interrupt() {
    const requestId = `bench_${randomUUID()}`;
    this.send({
      type: 'control_request',
      request_id: requestId,
      request: { subtype: 'interrupt', cancel_queued: true },
    });
    return requestId;
  }

  /** A whole turn: user line → first text delta → result. Times are relative to the write (or to `from`). */
  async turn(text, { start = performance.now() } = {}) {
    const mark = this.mark();
    this.sendUser(text);
    const delta = this.waitFor(isTextDelta, mark);
    delta.catch(() => {});
    const result = await this.waitFor(isResult, mark);
    const first = await delta;
    if (result.frame.is_error)
      throw new Error(`raw claude: the turn ended with an error result: ${JSON.stringify(result.frame).slice(0, 500)}`);
    return { firstDeltaMs: first.at - start, turnMs: result.at - start };
  }

  endInput() {
    this.child.stdin.end();
  }

  kill(signal) {
    try {
      this.child.kill(signal);
    } catch {
      // Already gone.
    }
  }

  /** Ends it for good (EOF, then SIGKILL after `graceMs`) and waits for the exit. */
  async dispose(graceMs = 3_000) {
    if (this.exitInfo) return;
    this.endInput();
    const timer = setTimeout(() => this.kill('SIGKILL'), graceMs);
    await this.closed;
    clearTimeout(timer);
  }
}
