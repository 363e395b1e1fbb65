import { randomBytes } from 'node:crypto';
import { environmentIncludes } from './proc-filesystem.js';

/**
 * The variable every claude child gets. Environments are inherited by every descendant, also by
 * commands that detach (nohup, setsid, double forks), so the marker finds what a process started
 * after it has left the process tree and its process group. Only a command that clears or edits
 * its environment (env -i, env -u, sudo) drops it.
 */
export const processMarkerVariable = 'TETHER_PROCESS_MARKER';

/** A fresh marker: 128 random bits as 32 lowercase hex digits. */
export function createProcessMarker(): string {
  return randomBytes(16).toString('hex');
}

/** Only a well-formed marker is ever searched for: an empty or short one could match strangers. */
export function isProcessMarker(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{32}$/.test(value);
}

/** Whether the process's environment carries this marker; false when it cannot be read. */
export function carriesMarker(pid: number, marker: string): boolean {
  if (!isProcessMarker(marker)) return false;
  return environmentIncludes(pid, `${processMarkerVariable}=${marker}`) === true;
}
