import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { startHostExitWatch } from './host-exit-watch.js';
import { isAlive } from './proc-filesystem.js';
import { createProcessMarker, processMarkerVariable } from './process-marker.js';
import { killedAfterEachTest } from './test-processes.test-helper.js';

const { markers, started } = killedAfterEachTest();

/** A detached process group carrying a fresh marker, its leader ignoring SIGTERM if asked: an agent and its tool. */
async function markedGroup(ignoreTerm: boolean): Promise<{ marker: string; leader: number; exited: Promise<unknown> }> {
  const marker = createProcessMarker();
  markers.push(marker);
  const child: ChildProcess = spawn('/bin/sh', ['-c', `${ignoreTerm ? 'trap "" TERM; ' : ''}sleep 60 & wait`], {
    stdio: 'ignore',
    detached: true,
    env: { PATH: '/usr/bin:/bin', [processMarkerVariable]: marker },
  });
  started.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return { marker, leader: child.pid!, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

describe.runIf(process.platform === 'linux')("a host's exit watch", () => {
  it('when its input ends, ends every marked process it was told of and not told gone (SIGKILL for one that ignores SIGTERM)', async () => {
    const [plain, stubborn, forgotten] = await Promise.all([markedGroup(false), markedGroup(true), markedGroup(false)]);
    const input = startHostExitWatch();
    expect(input).not.toBeNull();
    for (const { marker } of [plain, stubborn, forgotten]) input!.write(`+${marker}\n`);
    input!.write(`-${forgotten.marker}\n`);
    // The host's end, as the watch sees it: its input closes.
    input!.end();
    await Promise.all([plain.exited, stubborn.exited]);
    // A forgotten marker would have had its SIGTERM a second before the stubborn one's SIGKILL.
    expect(isAlive(forgotten.leader)).toBe(true);
  });
});
