import {
  type ProcessIdentity,
  findProcessesWithEnvironment,
  findProcessesWithEnvironmentInSlices,
} from './find-processes.js';
import { carriesMarker, isProcessMarker, processMarkerVariable } from './process-marker.js';
import { hasProcFilesystem, readProcessStatus } from './proc-filesystem.js';
import { pollUntil } from './poll-until.js';

export interface SweepOptions {
  /** The marker of the claude process whose descendants are swept. */
  readonly marker: string;
  /** Descendants found by parent-pid walk while the parent still lived; still checked for the marker. */
  readonly knownDescendants?: readonly ProcessIdentity[];
  /** How long SIGTERM has before SIGKILL. Default 1 s. */
  readonly graceMs?: number;
  /** Bound on the whole sweep; whatever still lives then is reported, not waited for. Default 3 s. */
  readonly timeoutMs?: number;
}

export interface SweepResult {
  /** False without /proc: nothing could be looked for (process-group signals are all there is). */
  readonly supported: boolean;
  /** Every marked process the sweep signalled, itself or through its process group. */
  readonly signalled: readonly number[];
  /** Marked processes still alive when the time bound ran out. */
  readonly survivors: readonly number[];
}

const defaultGraceMs = 1_000;
const defaultTimeoutMs = 3_000;

function sameProcessAlive(identity: ProcessIdentity): boolean {
  const status = readProcessStatus(identity.pid);
  return (
    status !== undefined && status.state !== 'Z' && status.state !== 'X' && status.startTime === identity.startTime
  );
}

/** Every live process (never this one) whose environment carries the marker. */
export function findMarkedProcesses(marker: string): ProcessIdentity[] {
  return isProcessMarker(marker) ? findProcessesWithEnvironment(`${processMarkerVariable}=${marker}`) : [];
}

/**
 * Signals one process and its process group, only after checking, right before the signal, that
 * it is still the same process and carries the marker: a reused pid never does. The group of a
 * marked process can only hold descendants of the same claude (a group never spans sessions and
 * claude started its own), so it also reaches members that dropped the marker; this process's
 * own group is never signalled.
 */
function signalMarked(
  identity: ProcessIdentity,
  marker: string,
  signal: NodeJS.Signals,
  ownGroup: number | undefined,
): boolean {
  if (identity.pid === process.pid || identity.pid <= 1) return false;
  const status = readProcessStatus(identity.pid);
  if (!status || status.state === 'Z' || status.state === 'X' || status.startTime !== identity.startTime) return false;
  if (!carriesMarker(identity.pid, marker)) return false;
  if (status.processGroup > 1 && status.processGroup !== ownGroup) {
    try {
      process.kill(-status.processGroup, signal);
    } catch {
      // The group emptied meanwhile, or is not ours to signal.
    }
  }
  try {
    process.kill(identity.pid, signal);
  } catch {
    // Gone meanwhile.
  }
  return true;
}

/**
 * Ends every process that carries the marker (plus the known descendants, checked the same way):
 * SIGTERM to each one's group and to itself, SIGKILL to whatever remains after the grace or was
 * started meanwhile, all within `timeoutMs`. Never throws; never signals a pid whose environment
 * lacks the marker, nor this process. Processes that cleared their environment (env -i, sudo)
 * are only reached through a marked process's group.
 */
export async function sweepDescendants(options: SweepOptions): Promise<SweepResult> {
  if (!isProcessMarker(options.marker) || !hasProcFilesystem())
    return { supported: hasProcFilesystem(), signalled: [], survivors: [] };
  const { marker } = options;
  const graceMs = options.graceMs ?? defaultGraceMs;
  const deadline = Date.now() + (options.timeoutMs ?? defaultTimeoutMs);
  const ownGroup = readProcessStatus(process.pid)?.processGroup;
  const known = options.knownDescendants ?? [];
  // In slices: the sweep runs after every claude exit, inside the host's event loop.
  const collect = async (): Promise<ProcessIdentity[]> => {
    const marked = await findProcessesWithEnvironmentInSlices(`${processMarkerVariable}=${marker}`);
    const targets = new Map(marked.map((identity) => [identity.pid, identity]));
    for (const identity of known) {
      if (!targets.has(identity.pid) && sameProcessAlive(identity) && carriesMarker(identity.pid, marker))
        targets.set(identity.pid, identity);
    }
    return [...targets.values()];
  };
  const signalled = new Set<number>();
  let targets = await collect();
  let signal: NodeJS.Signals = 'SIGTERM';
  while (targets.length > 0 && Date.now() < deadline) {
    for (const identity of targets) {
      // Verified as marked just now; one that is already dying went with an earlier one's group.
      signalMarked(identity, marker, signal, ownGroup);
      signalled.add(identity.pid);
    }
    const current = targets;
    const waitMs = Math.min(signal === 'SIGTERM' ? graceMs : 250, deadline - Date.now());
    await pollUntil(() => current.every((identity) => !sameProcessAlive(identity)), { timeoutMs: waitMs });
    // Look again: a process may have forked meanwhile. Whatever is left gets no second grace.
    targets = await collect();
    signal = 'SIGKILL';
  }
  return { supported: true, signalled: [...signalled], survivors: targets.map((identity) => identity.pid) };
}
