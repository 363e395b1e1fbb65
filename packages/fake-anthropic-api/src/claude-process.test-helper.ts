/** Test-only: runs the real claude binary against a fake API with an explicit environment and a temp HOME. */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
// Test-only (a devDependency): the protocol flags and the binary come from the package that owns them.
import { bundledBinaryPath, protocolArguments } from '@tether/provider-claude';

export type Frame = Record<string, any>;

export interface ClaudeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly frames: Frame[];
  readonly stderr: () => string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Writes one user message with a fresh uuid; returns the uuid. */
  send(text: string): string;
  writeLine(value: unknown): void;
  /** Resolves with the first frame (already seen or future) matching `predicate`. */
  waitForFrame(predicate: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame>;
  endStdin(): void;
  /** Kills the child by pid (if still running) and removes the temp HOME and cwd. */
  dispose(): Promise<void>;
}

export interface StartClaudeOptions {
  baseUrl: string;
  args?: string[];
  /** Adds `--permission-mode bypassPermissions` and IS_SANDBOX=1 (we run as root). */
  bypass?: boolean;
  maxRetries?: number;
}

function claudeBinaryPath(): string {
  const bundled = bundledBinaryPath();
  // The suite's global setup already failed loudly when the binary is missing; this is for a lone run.
  if (bundled === undefined)
    throw new Error(
      'The claude binary for tests is missing (@anthropic-ai/claude-agent-sdk platform package). Run "./dev npm ci".',
    );
  return bundled;
}

export function startClaude(options: StartClaudeOptions): ClaudeProcess {
  const home = mkdtempSync(path.join(tmpdir(), 'fake-api-home-'));
  const cwd = mkdtempSync(path.join(tmpdir(), 'fake-api-ws-'));
  // The CLI keeps its own files under $TMPDIR (claude-<uid>/, cc-socks/): a private one goes with the process.
  const temporary = mkdtempSync(path.join(tmpdir(), 'fake-api-tmp-'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: temporary,
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: 'sk-test',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    CLAUDE_CODE_MAX_RETRIES: String(options.maxRetries ?? 1),
    TERM: 'dumb',
    CI: 'true',
  };
  const args: string[] = [...protocolArguments];
  if (options.bypass === true) {
    env.IS_SANDBOX = '1';
    args.push('--permission-mode', 'bypassPermissions');
  }
  args.push(...(options.args ?? []));
  const child = spawn(claudeBinaryPath(), args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const frames: Frame[] = [];
  const listeners = new Set<(frame: Frame) => void>();
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdin.on('error', () => {});
  createInterface({ input: child.stdout }).on('line', (line) => {
    const frame = JSON.parse(line) as Frame;
    frames.push(frame);
    for (const listener of [...listeners]) listener(frame);
  });
  // 'close' comes after stdout has been fully read, so every frame is in `frames` by then.
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  let disposed = false;

  return {
    child,
    frames,
    stderr: () => stderr,
    exited: closed,
    send(text) {
      const uuid = randomUUID();
      this.writeLine({ type: 'user', message: { role: 'user', content: text }, parent_tool_use_id: null, uuid });
      return uuid;
    },
    writeLine(value) {
      child.stdin.write(`${JSON.stringify(value)}\n`);
    },
    waitForFrame(predicate, timeoutMs = 30_000) {
      const seen = frames.find(predicate);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        let done = false;
        const settle = (action: () => void): void => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          listeners.delete(listener);
          action();
        };
        const listener = (frame: Frame): void => {
          if (predicate(frame)) settle(() => resolve(frame));
        };
        const timer = setTimeout(
          () =>
            settle(() =>
              reject(new Error(`no matching frame within ${timeoutMs} ms; last frames: ${describe(frames)}`)),
            ),
          timeoutMs,
        );
        listeners.add(listener);
        void closed.then(({ code }) =>
          settle(() =>
            reject(
              new Error(
                `claude exited (code ${code}) before the expected frame; stderr: ${stderr.slice(-500)}; last frames: ${describe(frames)}`,
              ),
            ),
          ),
        );
      });
    },
    endStdin() {
      child.stdin.end();
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        // SIGTERM lets the CLI kill its own tool processes; SIGKILL only if it does not exit.
        process.kill(child.pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
            process.kill(child.pid, 'SIGKILL');
        }, 3_000);
        await closed;
        clearTimeout(timer);
      }
      for (const directory of [home, cwd, temporary]) rmSync(directory, { recursive: true, force: true });
    },
  };
}

function describe(frames: Frame[]): string {
  return frames
    .slice(-8)
    .map((frame) => [frame.type, frame.subtype ?? frame.event?.type].filter(Boolean).join('/'))
    .join(', ');
}
