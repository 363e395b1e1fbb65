import { spawn } from 'node:child_process';

export interface ChildScript {
  readonly pid: number;
  /** Resolves with the first stdout line (past or future) that matches; rejects if the child ends first. */
  readonly waitForLine: (matches: (line: string) => boolean) => Promise<string>;
  readonly send: (text: string) => void;
  /** Closes the child's stdin (its cue to let go) and resolves with its exit code. */
  readonly stop: () => Promise<number | null>;
}

/** Runs an ES module script in a second Node process, talking to it line by line. */
export function startChildScript(script: string): ChildScript {
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  let stderr = '';
  let ended = false;
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    lines.push(...parts);
    for (const waiter of waiters) waiter();
  });
  const closed = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      ended = true;
      for (const waiter of waiters) waiter();
      resolve(code);
    }),
  );
  return {
    pid: child.pid!,
    waitForLine: (matches) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const line = lines.find(matches);
          if (line !== undefined) resolve(line);
          else if (ended) reject(new Error(`The child process ended without the expected line. stderr: ${stderr.slice(0, 2000)}`));
          else return;
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
    send: (text) => child.stdin.write(text),
    stop: () => {
      child.stdin.end();
      return closed;
    },
  };
}

/** Runs a script to completion in a second Node process. */
export async function runChildScript(script: string): Promise<{ pid: number; code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { pid: child.pid!, code, stderr };
}
