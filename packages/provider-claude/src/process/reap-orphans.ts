import { isProcessMarker, processMarkerVariable } from './process-marker.js';
import { environmentIncludes, readProcessStatus } from './proc-filesystem.js';
import { type ProcessIdentity, snapshotDescendantsInSlices } from './find-processes.js';
import { sweepDescendants } from './sweep-descendants.js';

/** What a runtime stores about each claude process it starts, to clean up after its own crash. */
export interface ClaudeProcessRecord {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat as read right after spawn (ClaudeProcess.startTime). */
  readonly startTime: number;
  /** The process's TETHER_PROCESS_MARKER value (ClaudeProcess.marker). */
  readonly marker: string;
}

export interface ReapOptions {
  readonly graceMs?: number;
  readonly timeoutMs?: number;
}

type Verdict = 'alive' | 'gone' | 'contradicted';

/**
 * Whether the recorded process is still that very claude process (same pid, same start time, the
 * marker in its environment), is gone, or the pid now belongs to something the record does not
 * describe. A process in the middle of exiting keeps its stat entry but has no environment left to
 * read: with the recorded start time it is that process on its way out, so it counts as gone.
 */
function judge(record: ClaudeProcessRecord): Verdict {
  const status = readProcessStatus(record.pid);
  if (!status || status.state === 'Z' || status.state === 'X') return 'gone';
  if (status.startTime !== record.startTime) return 'contradicted';
  const marked = environmentIncludes(record.pid, `${processMarkerVariable}=${record.marker}`);
  if (marked === undefined) return 'gone';
  return marked ? 'alive' : 'contradicted';
}

/**
 * Ends what a crashed predecessor left running: for a record whose claude process still runs
 * (verified by start time and marker), that process, its group and every process carrying its
 * marker. For a record whose claude process is gone (it usually exits on stdin EOF when Tether
 * dies), the processes still carrying its marker: the marker alone identifies them, no pid is
 * trusted. A record whose pid now names a process with another start time or without the marker
 * is contradicted by what runs and is left alone. Without /proc nothing can be verified and
 * nothing is done. Returns every marked process that was signalled (itself or through its group).
 */
export async function reapOrphans(
  records: readonly ClaudeProcessRecord[],
  options: ReapOptions = {},
): Promise<{ reaped: number[] }> {
  const sweeps = records.map(async (record) => {
    if (!isProcessMarker(record.marker) || !Number.isInteger(record.pid) || record.pid <= 1) return [];
    const verdict = judge(record);
    if (verdict === 'contradicted') return [];
    // In slices: one whole-host walk per record would hold a starting daemon's event loop. A tree that
    // changes meanwhile loses nothing: the sweep below finds every marked process by its marker.
    const known: ProcessIdentity[] =
      verdict === 'alive'
        ? [{ pid: record.pid, startTime: record.startTime }, ...(await snapshotDescendantsInSlices(record.pid))]
        : [];
    const result = await sweepDescendants({ marker: record.marker, knownDescendants: known, ...options });
    return result.signalled;
  });
  const reaped = new Set((await Promise.all(sweeps)).flat());
  return { reaped: [...reaped] };
}
