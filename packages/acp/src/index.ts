export type { AcpHost, AcpLog, AcpSessionPage, RunAcpAgentOptions } from './acp-host.js';
export { runAcpAgent } from './run-acp-agent.js';
export const VERSION = '0.1.0';
