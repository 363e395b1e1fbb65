import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pollUntil } from './poll-until.js';
import { killedAfterEachTest } from './test-processes.test-helper.js';
import { isAlive, readProcessStatus } from './proc-filesystem.js';
import { createProcessMarker, processMarkerVariable } from './process-marker.js';
import {
  findProcessesWithEnvironmentInSlices,
  snapshotDescendants,
  snapshotDescendantsInSlices,
} from './find-processes.js';
import { findMarkedProcesses, sweepDescendants } from './sweep-descendants.js';

const { markers, started } = killedAfterEachTest();

function newMarker(): string {
  const marker = createProcessMarker();
  markers.push(marker);
  return marker;
}

/** A shell in its own session and group, as claude is started; with the marker unless `marker` is undefined. */
function shell(script: string, marker: string | undefined): ChildProcess & { pid: number } {
  const environment: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  if (marker !== undefined) environment[processMarkerVariable] = marker;
  const child = spawn('sh', ['-c', script], { env: environment, stdio: 'ignore', detached: true });
  started.push(child);
  return child as ChildProcess & { pid: number };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function markedCount(marker: string, count: number): Promise<void> {
  expect(await pollUntil(() => findMarkedProcesses(marker).length === count, { timeoutMs: 10_000 })).toBe(true);
}

describe.runIf(process.platform === 'linux')('finding processes', () => {
  it('finds exactly the processes that carry a marker', () => {
    const marker = newMarker();
    const marked = shell('exec sleep 30', marker);
    shell('exec sleep 30', newMarker());
    shell('exec sleep 30', undefined);
    expect(findMarkedProcesses(marker).map(({ pid }) => pid)).toEqual([marked.pid]);
    expect(findMarkedProcesses('')).toEqual([]);
  });

  it('finds the same processes in slices, the event loop running between them', async () => {
    const marker = newMarker();
    const marked = shell('exec sleep 30', marker);
    shell('exec sleep 30', newMarker());
    let turns = 0;
    let scanning = true;
    const turn = () => {
      if (!scanning) return;
      turns += 1;
      setImmediate(turn);
    };
    setImmediate(turn);
    const found = await findProcessesWithEnvironmentInSlices(`${processMarkerVariable}=${marker}`, {
      processesPerSlice: 1,
    });
    scanning = false;
    expect(found.map(({ pid }) => pid)).toEqual([marked.pid]);
    // This process and the two shells at least: one slice each, the loop turning between them.
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('finds a marked process in the middle of an execve (its environment reads empty for a moment)', async () => {
    const marker = newMarker();
    // Shells that exec themselves for good: each is inside an execve about 1% of the time.
    const again = 'exec sh -c "$0" "$0"';
    const environment = { PATH: process.env.PATH ?? '/usr/bin:/bin', [processMarkerVariable]: marker };
    const looping = [0, 1].map(() => {
      const child = spawn('sh', ['-c', again, again], { env: environment, stdio: 'ignore', detached: true });
      started.push(child);
      return child.pid!;
    });
    // Both are found in every walk: without the second look, 120 walks missed one in 3 runs of 3 here.
    for (let walk = 0; walk < 120; walk += 1) {
      const found = await findProcessesWithEnvironmentInSlices(`${processMarkerVariable}=${marker}`);
      expect(found.map(({ pid }) => pid).sort()).toEqual([...looping].sort());
    }
  });

  it('does not find a process started with no environment at all, after looking again', async () => {
    const marker = newMarker();
    const bare = spawn('env', ['-i', '/bin/sleep', '30'], { stdio: 'ignore' });
    started.push(bare);
    const marked = shell('exec sleep 30', marker);
    expect(await pollUntil(() => readProcessStatus(bare.pid!)?.command === 'sleep', { timeoutMs: 10_000 })).toBe(true);
    const found = await findProcessesWithEnvironmentInSlices(`${processMarkerVariable}=${marker}`);
    expect(found.map(({ pid }) => pid)).toEqual([marked.pid]);
  });

  it('walks descendants by parent pid, with their start times', async () => {
    // Marked so that afterEach ends the children too.
    const parent = shell('sleep 30 & sleep 30 & wait', newMarker());
    expect(await pollUntil(() => snapshotDescendants(parent.pid).length === 2, { timeoutMs: 10_000 })).toBe(true);
    for (const identity of snapshotDescendants(parent.pid)) {
      expect(readProcessStatus(identity.pid)).toMatchObject({ parentPid: parent.pid, startTime: identity.startTime });
    }
  });

  it("walks descendants in slices: a child's grandchild is found, and the event loop turns during the walk", async () => {
    // sh -> sh -> sleep: the inner shell forks sleep (a builtin follows it, so it does not exec it).
    const parent = shell('sh -c "sleep 30; :" & wait', newMarker());
    const commands = () => snapshotDescendants(parent.pid).map(({ pid }) => readProcessStatus(pid)?.command);
    expect(await pollUntil(() => commands().join() === 'sh,sleep', { timeoutMs: 10_000 })).toBe(true);
    let walking = true;
    let firedDuringWalk: boolean | undefined;
    // A probe, not a wait: it runs at the event loop's next turn, which the sliced walk must yield to.
    setImmediate(() => {
      firedDuringWalk = walking;
    });
    // The synchronous walk holds the event loop: the probe cannot run before it returns.
    const reference = snapshotDescendants(parent.pid);
    expect(firedDuringWalk).toBeUndefined();
    const found = await snapshotDescendantsInSlices(parent.pid, { processesPerSlice: 1 });
    walking = false;
    expect(firedDuringWalk).toBe(true);
    expect(found).toEqual(reference);
    const [child, grandchild] = found;
    expect(readProcessStatus(child!.pid)).toMatchObject({ parentPid: parent.pid, command: 'sh' });
    expect(readProcessStatus(grandchild!.pid)).toMatchObject({ parentPid: child!.pid, command: 'sleep' });
  });
});

describe.runIf(process.platform === 'linux')('sweepDescendants', () => {
  it('ends detached descendants the parent left behind, and nothing else', async () => {
    const marker = newMarker();
    const parent = shell('setsid sleep 300 >/dev/null 2>&1 & nohup sleep 300 >/dev/null 2>&1 & exit 0', marker);
    const unmarked = shell('exec sleep 300', undefined);
    const otherMarker = shell('exec sleep 300', newMarker());
    await exited(parent);
    await markedCount(marker, 2);
    const orphans = findMarkedProcesses(marker).map(({ pid }) => pid);
    // They really left: another session, no longer our descendants.
    for (const pid of orphans) expect(readProcessStatus(pid)?.parentPid).not.toBe(parent.pid);

    const result = await sweepDescendants({ marker });
    expect(result).toEqual({ supported: true, signalled: expect.arrayContaining(orphans), survivors: [] });
    expect(result.signalled).toHaveLength(2);
    expect(orphans.some(isAlive)).toBe(false);
    expect(isAlive(unmarked.pid)).toBe(true);
    expect(isAlive(otherMarker.pid)).toBe(true);
  });

  it('escalates to SIGKILL for a process that ignores SIGTERM', async () => {
    const marker = newMarker();
    // An ignored signal stays ignored across exec.
    const stubborn = shell('trap "" TERM; exec sleep 300', marker);
    // Once it is sleep, the trap is in place.
    expect(await pollUntil(() => readProcessStatus(stubborn.pid)?.command === 'sleep', { timeoutMs: 10_000 })).toBe(
      true,
    );
    const began = Date.now();
    const result = await sweepDescendants({ marker, graceMs: 100 });
    expect(result).toEqual({ supported: true, signalled: [stubborn.pid], survivors: [] });
    expect(Date.now() - began).toBeGreaterThanOrEqual(100);
    await exited(stubborn);
    expect(stubborn.signalCode).toBe('SIGKILL');
  });

  it("reaches a member of a marked process's group that dropped the marker, without signalling it by pid", async () => {
    const marker = newMarker();
    const leader = shell('env -u TETHER_PROCESS_MARKER sleep 300 & exec sleep 300', marker);
    let dropped: number | undefined;
    expect(
      await pollUntil(
        () => {
          dropped = snapshotDescendants(leader.pid).find(
            (identity) => readProcessStatus(identity.pid)?.command === 'sleep',
          )?.pid;
          return dropped !== undefined;
        },
        { timeoutMs: 10_000 },
      ),
    ).toBe(true);
    expect(readProcessStatus(dropped!)?.processGroup).toBe(leader.pid);
    const result = await sweepDescendants({ marker });
    expect(result.signalled).toEqual([leader.pid]);
    expect(await pollUntil(() => !isAlive(dropped!), { timeoutMs: 5_000 })).toBe(true);
  });

  it('checks known descendants for the marker too: a listed pid without it is never signalled', async () => {
    const marker = newMarker();
    const stranger = shell('exec sleep 300', undefined);
    const status = readProcessStatus(stranger.pid)!;
    const result = await sweepDescendants({
      marker,
      knownDescendants: [{ pid: stranger.pid, startTime: status.startTime }],
    });
    expect(result).toEqual({ supported: true, signalled: [], survivors: [] });
    expect(isAlive(stranger.pid)).toBe(true);
  });

  it('is bounded: with no time left it reports survivors instead of waiting', async () => {
    const marker = newMarker();
    const child = shell('exec sleep 300', marker);
    await markedCount(marker, 1);
    const result = await sweepDescendants({ marker, timeoutMs: 0 });
    expect(result).toEqual({ supported: true, signalled: [], survivors: [child.pid] });
  });

  it('does nothing for a malformed marker', async () => {
    expect(await sweepDescendants({ marker: '' })).toEqual({ supported: true, signalled: [], survivors: [] });
  });
});
