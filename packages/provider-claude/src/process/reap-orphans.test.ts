import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { pollUntil } from './poll-until.js';
import { killedAfterEachTest } from './test-processes.test-helper.js';
import { isAlive, readProcessStatus } from './proc-filesystem.js';
import { createProcessMarker, processMarkerVariable } from './process-marker.js';
import { reapOrphans } from './reap-orphans.js';
import { findMarkedProcesses } from './sweep-descendants.js';

const { markers, started } = killedAfterEachTest();

/** Stands in for a claude process a crashed runtime left: own session, a marker, a detached child. */
async function leftBehind(
  script: string,
): Promise<{ pid: number; startTime: number; marker: string; child: ChildProcess }> {
  const marker = createProcessMarker();
  markers.push(marker);
  const child = spawn('sh', ['-c', script], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', [processMarkerVariable]: marker },
    stdio: 'ignore',
    detached: true,
  });
  started.push(child);
  const startTime = readProcessStatus(child.pid!)!.startTime;
  return { pid: child.pid!, startTime, marker, child };
}

/** The marked processes once there are `count` of them: the list that was counted, not a second read. */
async function waitForMarked(marker: string, count: number): Promise<number[]> {
  let found: number[] = [];
  const counted = await pollUntil(
    () => {
      found = findMarkedProcesses(marker).map(({ pid }) => pid);
      return found.length === count;
    },
    { timeoutMs: 10_000 },
  );
  expect(counted).toBe(true);
  return found;
}

describe.runIf(process.platform === 'linux')('reapOrphans', () => {
  it('ends a recorded process that is still that process, its group and its marked descendants', async () => {
    const claude = await leftBehind('setsid sleep 300 >/dev/null 2>&1 & exec sleep 300');
    const pids = await waitForMarked(claude.marker, 2);
    const { reaped } = await reapOrphans([{ pid: claude.pid, startTime: claude.startTime, marker: claude.marker }]);
    expect(reaped.sort()).toEqual(pids.sort());
    expect(pids.some(isAlive)).toBe(false);
  });

  it('leaves a pid alone when its start time is not the recorded one (the pid was reused)', async () => {
    const other = await leftBehind('exec sleep 300');
    await waitForMarked(other.marker, 1);
    const { reaped } = await reapOrphans([{ pid: other.pid, startTime: other.startTime + 1, marker: other.marker }]);
    expect(reaped).toEqual([]);
    expect(isAlive(other.pid)).toBe(true);
  });

  it('leaves a pid alone when its environment lacks the recorded marker', async () => {
    const other = await leftBehind('exec sleep 300');
    const { reaped } = await reapOrphans([
      { pid: other.pid, startTime: other.startTime, marker: createProcessMarker() },
    ]);
    expect(reaped).toEqual([]);
    expect(isAlive(other.pid)).toBe(true);
  });

  it('still ends the marked descendants when the recorded process itself is gone', async () => {
    // What a crash usually leaves: claude saw stdin EOF and exited; what its tools detached runs on.
    const claude = await leftBehind('nohup sleep 300 >/dev/null 2>&1 & setsid sleep 300 >/dev/null 2>&1 & exit 0');
    await new Promise((resolve) => claude.child.once('exit', resolve));
    const orphans = await waitForMarked(claude.marker, 2);
    const { reaped } = await reapOrphans([{ pid: claude.pid, startTime: claude.startTime, marker: claude.marker }]);
    expect(reaped.sort()).toEqual(orphans.sort());
    expect(orphans.some(isAlive)).toBe(false);
  });

  it('ignores malformed records and an empty list', async () => {
    const other = await leftBehind('exec sleep 300');
    expect(await reapOrphans([])).toEqual({ reaped: [] });
    expect(
      await reapOrphans([
        { pid: other.pid, startTime: other.startTime, marker: '' },
        { pid: 1, startTime: 0, marker: other.marker },
      ]),
    ).toEqual({ reaped: [] });
    expect(isAlive(other.pid)).toBe(true);
  });
});
