import type { ChildProcess } from 'node:child_process';
import { afterEach } from 'vitest';
import { findMarkedProcesses } from './sweep-descendants.js';

/**
 * Lists a process test fills with what it starts; after each test, only those are killed: its
 * children by pid, and whatever carries its markers.
 */
export function killedAfterEachTest(): { readonly markers: string[]; readonly started: ChildProcess[] } {
  const markers: string[] = [];
  const started: ChildProcess[] = [];
  afterEach(() => {
    for (const marker of markers.splice(0))
      for (const { pid } of findMarkedProcesses(marker)) process.kill(pid, 'SIGKILL');
    for (const child of started.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { markers, started };
}
