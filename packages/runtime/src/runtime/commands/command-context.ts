import type { EventBody, Receipt } from '@tether/protocol';
import type {
  AgentProviderV1,
  AgentProviderV1Capabilities,
  AgentProviderV1Session,
  AgentProviderV1StopOptions,
} from '@tether/provider-spec';
import type { EventWriter } from '../../log/event-writer.js';
import { type Decided, isRefusal } from '../../state/refusal.js';
import type { BlobRecord, TetherStore } from '../../store/tether-store.js';
import type { InputQueue } from '../input-queue.js';
import type { OpenSessionLimit } from '../open-session-limit.js';
import { sessionNotFound, unsupported } from '../runtime-errors.js';
import type { SessionCache } from '../session-cache.js';
import type { ProviderOutput, SessionEntry } from '../session-entry.js';
import type { SessionChange, SessionLog } from '../session-log.js';
import type { SessionOwnership } from '../session-ownership.js';
import type { WorkspaceAcquirers } from '../../workspace/workspace-acquirers.js';
import type { CommandFingerprint } from '../command-fingerprint.js';

/** What every command works with: the runtime's parts, and what only the runtime itself can do. */
export interface CommandContext {
  readonly store: TetherStore;
  readonly writer: EventWriter;
  readonly log: SessionLog;
  /** The sessions in memory; the command's own session is pinned there while it runs. */
  readonly entries: SessionCache;
  readonly providers: ReadonlyMap<string, AgentProviderV1>;
  /** The provider open_session uses when it names none. */
  readonly defaultProvider: string;
  readonly openSessions: OpenSessionLimit;
  /** Which sessions this runtime may drive (a new one is claimed before its first commit). */
  readonly ownership: SessionOwnership;
  /** The sessions' follow-ups: after_turn inputs' content until they start, and what starts them. */
  readonly inputs: InputQueue;
  /** The acquirers of the workspace kinds this runtime can make. */
  readonly workspaces: WorkspaceAcquirers;
  /** A command's effects, applied and written with its receipt (and the blobs its events refer to) in one transaction. */
  write(
    entry: SessionEntry,
    bodies: readonly EventBody[],
    receipt: Receipt,
    fingerprint: CommandFingerprint,
    blobs?: readonly BlobRecord[],
  ): Promise<void>;
  /** A command's effects on several sessions, applied and written with its receipt in one transaction. */
  writeTogether(parts: readonly SessionChange[], receipt: Receipt, fingerprint: CommandFingerprint): Promise<void>;
  /** Where the session's provider output goes. */
  outputFor(entry: SessionEntry): ProviderOutput;
  /** The session's provider session, opened (the agent launched lazily) if it is not yet. */
  providerSession(entry: SessionEntry): Promise<AgentProviderV1Session>;
  /** Starts a run's provider work in the background; a failure to start fails the run. */
  startRun(entry: SessionEntry, runId: string, work: (session: AgentProviderV1Session) => Promise<void>): void;
  /** Stops the session's agent process; close ends the conversation, release keeps it resumable. */
  stopProcess(entry: SessionEntry, reason: 'close' | 'release', options?: AgentProviderV1StopOptions): Promise<void>;
  /** After the session closed and its agent stopped: its workspace released, once its last run was compared. */
  releaseWorkspace(entry: SessionEntry): Promise<void>;
  /** The runtime is shutting down (a policy answer is no longer sent). */
  isStopped(): boolean;
  /** Resolves when the run's end is published here, or after timeoutMs (RunWaiters.ended). */
  runEnded(runId: string, timeoutMs: number): Promise<void>;
}

/**
 * The command's session and what its decider accepted; the refusal is thrown, so the command
 * changes nothing. Every decider refuses a missing session, so an accepted command has one.
 */
export function accepted<Accepted extends object>(
  entry: SessionEntry | undefined,
  decided: Decided<Accepted>,
): { entry: SessionEntry; decision: Accepted } {
  if (isRefusal(decided)) throw decided.refusal;
  if (!entry) throw sessionNotFound();
  return { entry, decision: decided };
}

/**
 * Refuses with capability_unsupported what the session's provider declares it cannot do. Without
 * a provider (not configured in this runtime) the command goes on, to fail provider_unavailable.
 */
export function requireCapability(
  provider: AgentProviderV1 | null,
  can: (capabilities: AgentProviderV1Capabilities) => boolean,
  what: string,
  reason: string,
): void {
  if (provider && !can(provider.capabilities)) throw unsupported(provider, what, reason);
}
