import type { RunEnding } from '../classify/classify-run-end.js';
import type { ConnectionEnding } from './claude-connection.js';

/** How a connection's end reads to the one classifier every transport shares. */
export function toRunEnding(ending: ConnectionEnding, binaryPath: string): RunEnding {
  switch (ending.kind) {
    case 'spawn_failed':
      return { kind: 'spawn_failed', binaryPath, errorCode: ending.errorCode };
    case 'exited':
      return {
        kind: 'process_exited',
        exitCode: ending.exitCode,
        signal: ending.signal,
        stderrTail: ending.stderrTail,
      };
    case 'stream_failed':
      return { kind: 'stream_failed' };
    case 'stream_ended':
      return { kind: 'output_ended' };
  }
}
