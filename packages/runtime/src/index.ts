export { createAgentRuntime } from './runtime/agent-runtime.js';
export type {
  AgentRuntime,
  AgentRuntimeOptions,
  CommandInput,
  FollowOptions,
  LeaseChange,
  SubscribeOptions,
} from './runtime/runtime-types.js';
export type { ListSessionsOptions } from './runtime/session-listing.js';
export type { ShutdownOptions } from './runtime/shutdown-grace.js';
export { handleShutdownSignals, shutdownSignals, signalExitCode } from './runtime/shutdown-signals.js';
export type { ShutdownSignal, ShutdownSignalOptions } from './runtime/shutdown-signals.js';
export { createInMemoryStore } from './store/in-memory-store.js';
export type {
  WorkspaceAcquirer,
  PreparedWorkspace,
  WorkspaceBaseline,
  ReleaseOptions,
} from './workspace/workspace-acquirer.js';
export { type KeyedQueue, createKeyedQueue } from './workspace/keyed-queue.js';
export type {
  TetherStore,
  SessionRecord,
  RunRecord,
  InteractionRecord,
  StoredReceipt,
  CommitUnit,
  BlobRecord,
  SessionCounts,
  StoreHealth,
  SessionPageQuery,
  SessionPosition,
} from './store/tether-store.js';
export type {
  SessionCoordination,
  SessionClaim,
  SessionHolder,
  AppendNotice,
} from './store/session-coordination.js';
export { newestFirst } from './store/session-order.js';
export { decodeSessionCursor, encodeSessionCursor } from './store/session-cursor.js';
export { isReceiptExists, receiptExists } from './store/receipt-exists.js';
export { runRowColumns, runRowValues, storedRowReaders } from './store/stored-rows.js';
export type { RowReading } from './store/stored-rows.js';
export { createTether } from './simple/tether.js';
export type { Tether, TetherSession, Turn, OpenOptions } from './simple/tether.js';
export {
  decideSubmitTurn,
  decideClose,
  decideReopen,
  decideInterrupt,
  evolveSession,
  evolveRun,
} from './state/session-machine.js';
export type {
  Decision,
  DecisionContext,
  InterruptDecision,
  RunDecision,
  TurnDecision,
  TurnDecisionContext,
} from './state/session-machine.js';
export { isRefusal } from './state/refusal.js';
export type { Decided, Refusal } from './state/refusal.js';

export const VERSION = '0.1.0';
