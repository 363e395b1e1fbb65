import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import { AgentError } from '@tether/protocol';

/** How git is run for every call: which binary, and the environment it starts from (GIT_* already dropped). */
export interface GitContext {
  readonly gitPath: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Aborted when the host shuts down without waiting: git and whatever it started (hooks) are killed. */
  readonly signal?: AbortSignal;
}

/** The same git, never stopped by the host's shutdown: for taking back what a stopped call left. */
export function unstoppable(git: GitContext): GitContext {
  const { signal: _signal, ...rest } = git;
  return rest;
}

/**
 * The process groups of the git commands running now. Each git runs in a group of its own, so that
 * its hooks and filters go with it when it is killed; and whatever ends this process ends them too
 * (no git or hook outlives the host, even one that exits without shutting down).
 */
const runningGroups = new Set<number>();
let endedWithProcess = false;

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // Gone already.
  }
}

function trackGroup(pid: number): void {
  if (!endedWithProcess) {
    endedWithProcess = true;
    process.on('exit', () => {
      for (const group of runningGroups) killGroup(group);
    });
  }
  runningGroups.add(pid);
}

function stoppedByShutdown(call: GitCall): AgentError {
  return new AgentError({
    code: 'runtime_stopped',
    message: `Tether is shutting down, so git ${subcommandOf(call.args)} in ${call.cwd} was stopped (and what it had begun taken back). Run the command again once Tether runs.`,
    details: { reason: 'git_stopped' },
  });
}

export interface GitCall {
  readonly cwd: string;
  readonly args: readonly string[];
  /** Added to the context's environment for this call only (e.g. GIT_INDEX_FILE for a snapshot). */
  readonly environment?: Readonly<Record<string, string>>;
  /** Bytes of stdout kept; more fails the call, unless `cutOutput` (then the rest is dropped and git stopped). */
  readonly maxOutputBytes?: number;
  readonly cutOutput?: boolean;
}

export interface GitResult {
  readonly exitCode: number;
  readonly stdout: Buffer;
  readonly stderr: string;
  /** stdout was cut at maxOutputBytes (only with cutOutput). */
  readonly cut: boolean;
}

const defaultMaxOutputBytes = 16 * 1024 * 1024;
const maxStderrBytes = 64 * 1024;

/**
 * Variables that may stay: where git finds its own configuration and helpers. Every other GIT_* is dropped,
 * because a daemon started from a git hook or inside a checkout inherits GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE
 * and the like, which would point every command at the wrong repository or index. (The agent's own git keeps
 * the user's other GIT_* variables: provider-claude's build-environment.ts drops only the repository's.)
 */
const keptGitVariables = new Set(['GIT_CONFIG_GLOBAL', 'GIT_CONFIG_SYSTEM', 'GIT_CONFIG_NOSYSTEM', 'GIT_EXEC_PATH']);

export function gitEnvironment(base: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined) continue;
    if (name.startsWith('GIT_') && !keptGitVariables.has(name)) continue;
    environment[name] = value;
  }
  // Never wait on a prompt nobody can answer; messages in English, so the few Tether recognises parse.
  environment.GIT_TERMINAL_PROMPT = '0';
  environment.LC_ALL = 'C';
  return environment;
}

/**
 * Starts `start`'s child with no group or world write in its umask (on top of the host's own): under a
 * permissive one (000, 002) git made the worktree's folder in the repository's .git (worktrees/<name>:
 * commondir, gitdir, HEAD) and the session's branch writable by others, who could point commondir at a
 * config of theirs whose core.fsmonitor Tether's next git call runs as the daemon's user. The child is
 * forked within the call, so only that one step runs under it; a file another thread of the process
 * creates meanwhile is at most more private than it would have been.
 */
function withPrivateUmask<Result>(start: () => Result): Result {
  // A worker thread may not set it (the host chose to run Tether there): git runs under the process's own.
  if (!isMainThread) return start();
  // process.umask(mask) answers the one it replaced: set twice to learn it without ever loosening it.
  const previous = process.umask(0o077);
  process.umask(previous | 0o022);
  try {
    return start();
  } finally {
    process.umask(previous);
  }
}

/**
 * Runs git (no shell) and answers whatever it exited with. Throws only when git could not be run, ran past
 * the timeout, or printed more than the call allows: each an AgentError saying what to do.
 */
export function runGit(git: GitContext, call: GitCall): Promise<GitResult> {
  const maxOutputBytes = call.maxOutputBytes ?? defaultMaxOutputBytes;
  if (git.signal?.aborted) return Promise.reject(stoppedByShutdown(call));
  return new Promise((resolve, reject) => {
    const child = withPrivateUmask(() =>
      spawn(git.gitPath, call.args, {
        cwd: call.cwd,
        env: { ...git.environment, ...call.environment },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      }),
    );
    const group = child.pid;
    if (group !== undefined) trackGroup(group);
    const kill = () => {
      if (group !== undefined) killGroup(group);
      else child.kill('SIGKILL');
    };
    let stopped = false;
    const stop = () => {
      stopped = true;
      kill();
    };
    git.signal?.addEventListener('abort', stop, { once: true });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let cut = false;
    let overflow = false;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, git.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut || overflow) return;
      const room = maxOutputBytes - stdoutBytes;
      if (chunk.length <= room) {
        stdout.push(chunk);
        stdoutBytes += chunk.length;
        return;
      }
      if (call.cutOutput) {
        stdout.push(chunk.subarray(0, room));
        stdoutBytes += room;
        cut = true;
      } else {
        overflow = true;
      }
      kill();
    });
    // Decoded as a stream: git's messages (a path in any language) are matched and quoted whole.
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < maxStderrBytes) stderr += chunk;
    });
    const settled = () => {
      clearTimeout(timer);
      git.signal?.removeEventListener('abort', stop);
      if (group !== undefined) runningGroups.delete(group);
    };
    child.on('error', (error: NodeJS.ErrnoException) => {
      settled();
      // A spawn in a folder that is gone fails as a missing program would (ENOENT): tell them apart.
      if (error.code === 'ENOENT' && !existsSync(call.cwd)) {
        reject(
          new AgentError({
            code: 'invalid_workspace',
            message: `The folder ${call.cwd} no longer exists (moved or deleted?), so git cannot work in it. Put it back where it was, then retry.`,
            details: { reason: 'missing', systemErrorCode: error.code },
            cause: error,
          }),
        );
        return;
      }
      reject(
        new AgentError({
          code: 'invalid_workspace',
          message: `git could not be started (${git.gitPath} in ${call.cwd}: ${error.code ?? error.message}). Check that git is installed and on the PATH of the process that runs Tether (or, where the host sets gitPath, that it points at git), then retry.`,
          details: { reason: 'git_unavailable', ...(error.code ? { systemErrorCode: error.code } : {}) },
          cause: error,
        }),
      );
    });
    child.on('close', (exitCode) => {
      settled();
      const command = `git ${subcommandOf(call.args)}`;
      if (stopped) {
        reject(stoppedByShutdown(call));
        return;
      }
      if (timedOut) {
        reject(
          new AgentError({
            code: 'invalid_workspace',
            message: `${command} in ${call.cwd} did not finish within ${git.timeoutMs} ms. Check the repository (a huge worktree, a slow disk or a hook that waits) and retry.`,
            details: { reason: 'git_timeout' },
          }),
        );
        return;
      }
      if (overflow) {
        reject(
          new AgentError({
            code: 'invalid_workspace',
            message: `${command} in ${call.cwd} printed more than ${maxOutputBytes} bytes. The worktree holds more changes than Tether reads at once (its commits count too, so committing does not help): remove some, or list what need not be compared (build output, dependencies) in .gitignore, and retry.`,
            details: { reason: 'git_output_too_large' },
          }),
        );
        return;
      }
      resolve({ exitCode: cut ? 0 : (exitCode ?? 1), stdout: Buffer.concat(stdout), stderr, cut });
    });
  });
}

/** The git command a call runs (`worktree`, `diff-tree`…), past any `-c name=value` before it. */
function subcommandOf(args: readonly string[]): string {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index] ?? '';
    if (arg === '-c' || arg === '-C') index++;
    else return arg;
  }
  return '';
}

/** git's own explanation of a failure: its first `fatal:`/`error:` line, or its first line. */
export function gitComplaint(result: GitResult): string {
  const lines = result.stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0);
  // Without git's own fatal or error line, the last one: git prints its progress first ("Preparing
  // worktree…"), and what failed after it (a hook's complaint) last.
  const complaint =
    lines.find((line) => /^(fatal|error):/.test(line)) ?? lines.at(-1) ?? `exit code ${result.exitCode}`;
  return complaint.slice(0, 500);
}

/** The AgentError for a git command that failed where Tether did not expect it to. */
export function gitFailed(call: GitCall, result: GitResult): AgentError {
  return new AgentError({
    code: 'invalid_workspace',
    message: `git ${subcommandOf(call.args)} failed in ${call.cwd}: ${gitComplaint(result)}. Fix the repository (running the same git command shows why) and retry.`,
    details: { reason: 'git_failed', exitCode: result.exitCode },
  });
}

/**
 * A path git printed on a line of its own: only the line's end is cut. A folder's name may end in
 * spaces, and trimming them named another folder (a repository next to it, with the name without).
 */
export function gitPathOf(stdout: Buffer | string): string {
  const text = typeof stdout === 'string' ? stdout : stdout.toString('utf8');
  return text.endsWith('\n') ? text.slice(0, -1) : text;
}

/** Runs git and answers its stdout as text; a non-zero exit is an AgentError (git_failed). */
export async function gitText(git: GitContext, call: GitCall): Promise<string> {
  const result = await runGit(git, call);
  if (result.exitCode !== 0) throw gitFailed(call, result);
  return result.stdout.toString('utf8');
}
