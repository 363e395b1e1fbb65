import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The committed `tether` executable the tests run, as a user would. */
export const tetherBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/tether.js');

export interface FinishedTether {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** performance.now() when the process was seen to exit. */
  readonly exitedAt: number;
}

export interface SpawnTetherOptions {
  readonly cwd: string;
  readonly environment: Record<string, string>;
  /** The node that runs bin/tether.js (default: the one running the tests). */
  readonly node?: string;
  /** 'pipe' for a test that answers on the command's stdin (child.stdin); default 'ignore'. */
  readonly stdin?: 'pipe' | 'ignore';
  readonly onStdoutLine?: (line: string) => void;
  readonly onStderr?: (text: string) => void;
}

/** The session id `tether run` names on stderr (`session ses_…`). */
export function sessionIdFrom(stderr: string): string {
  const match = /session (ses_[0-9a-f]{32})/.exec(stderr);
  if (!match) throw new Error(`no session id in: ${stderr}`);
  return match[1]!;
}

/** Starts `tether ARGS` with exactly the given environment; `finished` settles when it exits. */
export function spawnTether(
  args: readonly string[],
  options: SpawnTetherOptions,
): { child: ChildProcess; finished: Promise<FinishedTether> } {
  const child = spawn(options.node ?? process.execPath, [tetherBin, ...args], {
    cwd: options.cwd,
    env: options.environment,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  const finished = new Promise<FinishedTether>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let pending = '';
    let exitedAt = 0;
    // Decoded as a stream: a character split across two reads is one character, not two U+FFFD.
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    child.stdout!.on('data', (chunk) => {
      stdout += chunk;
      pending += chunk;
      for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
        options.onStdoutLine?.(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
    });
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      options.onStderr?.(String(chunk));
    });
    child.on('error', reject);
    child.on('exit', () => (exitedAt = performance.now()));
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, exitedAt }));
  });
  return { child, finished };
}
