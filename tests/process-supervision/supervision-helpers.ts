import { type ClaudeTestEnvironment, createClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { afterEach, expect } from 'vitest';
import {
  pollUntil,
  readProcessCommandLine,
  readProcessEnvironment,
  readProcessStatus,
  snapshotDescendants,
} from '@tether/provider-claude/test-support';

/** Backgrounded in the ways a tool command can outlive its Bash call (plain `sleep N &` is refused by the CLI). */
export const detachingCommand =
  'nohup sleep 300 > /dev/null 2>&1 & setsid sleep 300 > /dev/null 2>&1 & tail -f /dev/null > /dev/null 2>&1 &';

/**
 * What detachingCommand leaves once every fork has become its command. The name in stat changes
 * before an execve is done, while the new image's environment and arguments still read empty: a
 * `nohup` caught there looks like `sleep` but is missing from a HOME scan a moment later. Its
 * arguments reading as the command too means the exec is over.
 */
function isDetachedCommand(pid: number): boolean {
  const command = commandOf(pid);
  return (command === 'sleep' || command === 'tail') && readProcessCommandLine(pid)?.[0] === command;
}

/** Every live process of this test: each one carries the test's unique HOME. */
function testProcesses(environment: ClaudeTestEnvironment): number[] {
  return processesWithEnvironment('HOME', environment.home);
}

function executable(pid: number): string | undefined {
  return readProcessCommandLine(pid)?.[0];
}

export function claudeProcesses(environment: ClaudeTestEnvironment): number[] {
  return testProcesses(environment).filter((pid) => executable(pid) === environment.claudePath);
}

/** Processes of this test other than claude itself, i.e. what its tools started. */
function toolProcesses(environment: ClaudeTestEnvironment): number[] {
  return testProcesses(environment).filter((pid) => executable(pid) !== environment.claudePath);
}

export function markerOf(pid: number): string | undefined {
  return readProcessEnvironment(pid)
    ?.find((entry) => entry.startsWith('TETHER_PROCESS_MARKER='))
    ?.slice('TETHER_PROCESS_MARKER='.length);
}

export function commandOf(pid: number): string | undefined {
  return readProcessStatus(pid)?.command;
}

/** Waits (polling /proc, bounded) until `count` tool processes run their final command (not a shell mid-fork); returns them. */
export async function waitForToolProcesses(
  environment: ClaudeTestEnvironment,
  count: number,
  where: (pid: number) => boolean = isDetachedCommand,
): Promise<number[]> {
  const found = await pollUntil(() => toolProcesses(environment).filter(where).length >= count, { timeoutMs: 10_000 });
  expect(found, `expected ${count} tool processes, found ${toolProcesses(environment).length}`).toBe(true);
  return toolProcesses(environment).filter(where);
}

/**
 * Ends a host's exit watch (the `/bin/sh` that ends its agents when it dies), as a host killed
 * together with its watch would leave things: what the next host's start must then reap.
 */
export async function killExitWatchOf(hostPid: number): Promise<void> {
  const watches = snapshotDescendants(hostPid)
    .map(({ pid }) => pid)
    .filter((pid) => executable(pid) === '/bin/sh' && readProcessCommandLine(pid)?.[2]?.includes('signal_marked'));
  expect(watches).toHaveLength(1);
  for (const pid of watches) process.kill(pid, 'SIGKILL');
  expect(
    await pollUntil(() => watches.every((pid) => readProcessStatus(pid) === undefined), { timeoutMs: 5_000 }),
  ).toBe(true);
}

/** Asserts that nothing of this test is left, allowing a bounded time for exits to be collected. */
export async function expectNothingLeft(environment: ClaudeTestEnvironment, timeoutMs = 5_000): Promise<void> {
  await pollUntil(() => testProcesses(environment).length === 0, { timeoutMs });
  expect(testProcesses(environment).map((pid) => `${pid} ${commandOf(pid)}`)).toEqual([]);
}

/** A sandboxed claude test environment per test; after the test, what it left running (a test that failed) is killed and it is removed. */
export function sandboxPerTest(): () => Promise<ClaudeTestEnvironment> {
  let environment: ClaudeTestEnvironment | undefined;
  afterEach(async () => {
    await environment?.killProcessesLeft();
    await environment?.cleanup();
    environment = undefined;
  });
  return async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    return environment;
  };
}
