export { VERSION, PROTOCOL_VERSION } from './version.js';
export { CommandId, SessionId, RunId, newSessionId, newRunId, newCommandId } from './identifiers.js';
export { PermissionMode } from './permission-mode.js';
export {
  Workspace,
  DirectoryWorkspace,
  GitWorktreeWorkspace,
  WorktreeFacts,
  WorkspaceStatus,
  ChangedFile,
  SessionDiff,
  DeletedSession,
  agentDirectory,
  keptBecauseWords,
  sessionDirectories,
} from './workspace.js';
export type { WorkspaceKind } from './workspace.js';
export { worktreeAfterDelete } from './worktree-after-delete.js';
export type { ShownNames } from './worktree-after-delete.js';
export {
  InputPart,
  TextInputPart,
  ImageMediaType,
  ImageDataInputPart,
  ImagePathInputPart,
  FileInputPart,
  SubmittedInputPart,
  RecordedImagePart,
  RecordedFilePart,
  inputPartTypes,
  inputPartPosition,
  textInputLengthLimit,
} from './input.js';
export type { InputPartType } from './input.js';
export { imageLimits } from './image-limits.js';
export { diffLimits } from './diff-limits.js';
export { inspectImage } from './inspect-image.js';
export type { ImageFacts, ImageRefusal } from './inspect-image.js';
export { ModelDescription, ModelList } from './models.js';
export {
  SessionConfiguration,
  EnvironmentVariableName,
  Effort,
  configurationLimits,
  describeConfiguration,
  sessionConfigurationKeys,
} from './session-configuration.js';
export type { ConfigurationRefusal } from './session-configuration.js';
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
  RespondInteractionCommand,
  RespondInteractionReceipt,
  SetPermissionModeCommand,
  SetPermissionModeReceipt,
  ControlName,
  RunControlCommand,
  RunControlReceipt,
  SetModelCommand,
  SetModelReceipt,
  GetContextUsageCommand,
  GetContextUsageReceipt,
  CancelQueuedInputCommand,
  CancelQueuedInputReceipt,
  GetSessionCostCommand,
  GetSessionCostReceipt,
  ForkSessionCommand,
  ForkSessionReceipt,
  RewindSessionCommand,
  RewindSessionReceipt,
  RestoredFiles,
  ProviderName,
} from './commands.js';
export type { CommandType } from './commands.js';
export { ContextUsage, LimitWindow, PlanLimits, accountLimitWindow, shownLimitWindows } from './plan-limits.js';
export type { ShownLimitWindow } from './plan-limits.js';
export {
  InputCancelReason,
  InputDelivery,
  InputHold,
  InputHoldReason,
  InputId,
  QueuedInput,
  newInputId,
} from './queued-inputs.js';
export { commandMethodNames, commandTypes, commandFromInput, commandMethods } from './command-surface.js';
export type {
  CommandInput,
  CommandMethodName,
  CommandMethods,
  CommandOfType,
  ReceiptFor,
  ReceiptOfType,
  StoredBlob,
  DeleteSessionOptions,
  SubscribeOptions,
  TetherSurface,
} from './command-surface.js';
export { describeIssues, parseCommand } from './parse-command.js';
export {
  ProtocolEvent,
  RunOutcome,
  StopReason,
  toolActivityLimits,
  DiagnosticLevel,
  protocolEventTypes,
  eventBodySchema,
  isRunTerminal,
  deltaTextLimit,
  contextTokensLimit,
  eventIdLengthLimit,
  SessionOpenedEvent,
  SessionClosedEvent,
  SessionForkedEvent,
  SessionRewoundEvent,
  SessionWorkspaceReadyEvent,
  SessionWorkspaceReleasedEvent,
  RunFilesChangedEvent,
  SessionProviderSessionChangedEvent,
  RunStartedEvent,
  RunCheckpointedEvent,
  checkpointStartsAnew,
  RunInterruptRequestedEvent,
  RunQueuedEvent,
  RunMessageDeltaEvent,
  RunThinkingDeltaEvent,
  RunRetryingEvent,
  RunToolActivityEvent,
  RunUsageEvent,
  RunCompletedEvent,
  DiagnosticEvent,
  SessionModeChangedEvent,
  SessionModelChangedEvent,
  SessionProcessStartedEvent,
  SessionProcessStoppedEvent,
  ControlCompletedEvent,
  ContextClearedEvent,
  ContextCompactedEvent,
  InteractionRequestedEvent,
  InteractionSettledEvent,
  InteractionWithdrawnEvent,
  InteractionCancelledEvent,
  InteractionSendFailedEvent,
  InputQueuedEvent,
  InputStartedEvent,
  InputFoldedEvent,
  InputCancelledEvent,
  InputHeldEvent,
  SessionLimitsChangedEvent,
  SessionContextMeasuredEvent,
} from './events.js';
export {
  InteractionRef,
  newInteractionRef,
  interactionBounds,
  ToolCategory,
  ApprovalRequest,
  QuestionSetRequest,
  Question,
  QuestionOption,
  InteractionRequest,
  InteractionAnswer,
  QuestionAnswerItem,
  InteractionStatus,
  InteractionOutcome,
  CancelReason,
  isOpenInteraction,
} from './interactions.js';
export type { InteractionKind } from './interactions.js';
export { changesNothing, checkAnswer } from './validate-answer.js';
export { describeSessionGrant, projectApprovalOffered } from './session-grant.js';
export type { ProtocolEventType, EventOfType, EventBody, EventBodyOfType } from './events.js';
export {
  SessionSnapshot,
  SessionState,
  RunSnapshot,
  RunStatus,
  InteractionSnapshot,
  LastRun,
} from './session-snapshot.js';
export { turnTitle, sessionTitleMaxLength } from './session-title.js';
export { writeOutBidirectionalControls } from './bidirectional-controls.js';
export { foldBlankLineRuns } from './blank-line-runs.js';
export { describeContextCompaction } from './context-compaction.js';
export {
  checkPageLimit,
  checkSessionIdArgument,
  checkSessionPosition,
  checkSessionState,
  checkStartSeq,
  checkSubscriptionStart,
  wholeNumberOf,
} from './read-queries.js';
export { countsAsActivity, housekeepingEventTypes } from './session-activity.js';
export { AgentError, SerializedAgentError, ErrorDetails, toAgentError } from './errors/agent-error.js';
export type { AgentErrorOptions } from './errors/agent-error.js';
export { errorCodeTable, errorCodes, httpStatusForCode, exitCodeForCode } from './errors/error-codes.js';
export type { ErrorCode } from './errors/error-codes.js';
export { ProviderCapabilities, ProviderAvailability, ProviderDescription } from './providers.js';
