export { VERSION, PROTOCOL_VERSION } from './version.js';
export { CommandId, SessionId, RunId, newSessionId, newRunId, newCommandId } from './identifiers.js';
export { PermissionMode } from './permission-mode.js';
export { Workspace, DirectoryWorkspace } from './workspace.js';
export { InputPart, TextInputPart } from './input.js';
export { SessionConfiguration, EnvironmentVariableName, Effort, describeConfiguration, sessionConfigurationKeys } from './session-configuration.js';
export { TokenUsage, zeroUsage, addUsage } from './usage.js';
export {
  Command,
  OpenSessionCommand,
  SubmitTurnCommand,
  InterruptRunCommand,
  CloseSessionCommand,
  Receipt,
  OpenSessionReceipt,
  SubmitTurnReceipt,
  InterruptRunReceipt,
  CloseSessionReceipt,
  ProviderName,
  commandTypes,
} from './commands.js';
export type { CommandType, ReceiptFor } from './commands.js';
export { parseCommand } from './parse-command.js';
export {
  ProtocolEvent,
  RunOutcome,
  DiagnosticLevel,
  protocolEventTypes,
  isRunTerminal,
  SessionOpenedEvent,
  SessionClosedEvent,
  SessionProviderSessionChangedEvent,
  RunStartedEvent,
  RunMessageDeltaEvent,
  RunThinkingDeltaEvent,
  RunRetryingEvent,
  RunToolActivityEvent,
  RunUsageEvent,
  RunCompletedEvent,
  DiagnosticEvent,
} from './events.js';
export type { ProtocolEventType, EventOfType, EventBody, EventBodyOfType } from './events.js';
export { SessionSnapshot, SessionState, RunSnapshot, RunStatus } from './session-snapshot.js';
export { AgentError, SerializedAgentError, ErrorDetails, toAgentError } from './errors/agent-error.js';
export type { AgentErrorOptions } from './errors/agent-error.js';
export { errorCodeTable, errorCodes, httpStatusForCode, exitCodeForCode } from './errors/error-codes.js';
export type { ErrorCode } from './errors/error-codes.js';
