// @tether/provider-claude/test-support: what the process-supervision tests (tests/process-supervision,
// tests/conformance, tests/daemon) need to see of supervision itself. Not for hosts: the boundary
// test lets only test files and the testkit import it.
export { pollUntil } from './process/poll-until.js';
export { isAlive, readProcessEnvironment, readProcessStatus } from './process/proc-filesystem.js';
export { ClaudeProcess } from './session/claude-process.js';
export type { ProcessExit } from './session/claude-process.js';
