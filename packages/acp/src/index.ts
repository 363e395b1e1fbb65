export type { AcpHost, AcpLog, AcpSessionPage, RunAcpAgentOptions } from './acp-host.js';
// TODO(issue 15): runAcpAgent(options: RunAcpAgentOptions): Promise<void>, resolving when the client closes the connection.
export const VERSION = '0.1.0';
