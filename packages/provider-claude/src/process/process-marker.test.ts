import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { carriesMarker, createProcessMarker, isProcessMarker, processMarkerVariable } from './process-marker.js';

const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

describe('process markers', () => {
  it('are 128 random bits in lowercase hex', () => {
    const markers = new Set(Array.from({ length: 100 }, createProcessMarker));
    expect(markers.size).toBe(100);
    for (const marker of markers) expect(marker).toMatch(/^[0-9a-f]{32}$/);
  });

  it('accept only well-formed values, so an empty one never matches a stranger', () => {
    expect(isProcessMarker(createProcessMarker())).toBe(true);
    for (const value of ['', 'abc', 'A'.repeat(32), `${createProcessMarker()}0`, undefined, 42])
      expect(isProcessMarker(value)).toBe(false);
  });

  it.runIf(process.platform === 'linux')(
    'are found in the environment of the process that carries them, and only there',
    () => {
      const marker = createProcessMarker();
      const child = spawn('sleep', ['30'], {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', [processMarkerVariable]: marker },
        stdio: 'ignore',
      });
      started.push(child);
      expect(carriesMarker(child.pid!, marker)).toBe(true);
      expect(carriesMarker(child.pid!, createProcessMarker())).toBe(false);
      expect(carriesMarker(child.pid!, '')).toBe(false);
      expect(carriesMarker(process.pid, marker)).toBe(false);
    },
  );
});
