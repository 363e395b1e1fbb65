// @tether/provider-claude/test-support: what the process-supervision tests (tests/process-supervision,
// tests/conformance, tests/daemon) need to see of supervision itself. Not for hosts: the boundary
// test lets only test files and the testkit import it.
export { pollFor, pollUntil } from './process/poll-until.js';
// The process probes, once: the testkit and the benchmark (bench/lib/proc.mjs) find and read processes with these too.
export {
  isAlive,
  readProcessCommandLine,
  readProcessEnvironment,
  readProcessStatus,
} from './process/proc-filesystem.js';
export type { ProcessStatus } from './process/proc-filesystem.js';
export { processesWithEnvironment, snapshotDescendants } from './process/find-processes.js';
export { autogroupNiceOf } from './process/agent-priority.js';
export { ClaudeProcess } from './process/claude-process.js';
export { StdoutChannel } from './process/stdout-channel.js';
export type { ProcessExit } from './process/claude-process.js';
