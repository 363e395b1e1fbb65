import { AgentError, isOpenInteraction, type ProtocolEvent } from '@tether/protocol';
import { receiptExists } from './receipt-exists.js';
import { isAfter, newestFirst } from './session-order.js';
import type {
  CommitUnit,
  InteractionRecord,
  RunRecord,
  SessionCounts,
  SessionRecord,
  StoredReceipt,
  TetherStore,
} from './tether-store.js';

function copy<T>(value: T): T {
  return structuredClone(value);
}

/** Request order: requestedAt, then first insertion (a Map keeps an upserted key where it was; sort is stable). */
function byRequestOrder(left: InteractionRecord, right: InteractionRecord): number {
  // Code-unit comparison, as SQLite's BINARY collation orders the same strings.
  return left.requestedAt < right.requestedAt ? -1 : left.requestedAt > right.requestedAt ? 1 : 0;
}

/** A store that keeps everything in memory: for unit tests and throwaway hosts. */
export function createInMemoryStore(): TetherStore {
  const sessions = new Map<string, SessionRecord>();
  const runs = new Map<string, RunRecord>();
  const receipts = new Map<string, StoredReceipt>();
  const events = new Map<string, ProtocolEvent[]>();
  // Per session, so a reference can never reach another session's interaction.
  const interactions = new Map<string, Map<string, InteractionRecord>>();
  // Each blob once, by hash; which sessions refer to it, by session (a session reads only its own).
  const blobs = new Map<string, { mediaType: string; bytes: Uint8Array }>();
  const blobReferences = new Map<string, Set<string>>();
  let closed = false;

  function assertOpen(): void {
    if (closed)
      throw new AgentError({
        code: 'store_failure',
        message: 'The store is closed. Create a new runtime to continue.',
      });
  }

  function checkSequence(unit: CommitUnit): void {
    const next = new Map<string, number>();
    for (const event of unit.events) {
      const expected = (next.get(event.sessionId) ?? events.get(event.sessionId)?.length ?? 0) + 1;
      if (event.seq !== expected) {
        throw new AgentError({
          code: 'store_failure',
          message: `Refused to store event ${event.seq} of a session whose next event is ${expected}; nothing was written.`,
          details: { reason: 'sequence_conflict' },
        });
      }
      next.set(event.sessionId, event.seq);
    }
  }

  /** A receipt is written once: a unit carrying one already stored (or twice) is refused whole. */
  function checkReceipts(unit: CommitUnit): void {
    const carried = new Set<string>();
    for (const { commandId } of unit.receipts) {
      if (receipts.has(commandId) || carried.has(commandId)) throw receiptExists();
      carried.add(commandId);
    }
  }

  return {
    kind: 'memory',
    async loadSessions() {
      assertOpen();
      return [...sessions.values()].map(copy);
    },
    async listSessionsInDirectory(directory) {
      assertOpen();
      return [...sessions.values()].filter((session) => session.workspaceStatus?.directory === directory).map(copy);
    },
    async loadOpenSessions() {
      assertOpen();
      return [...sessions.values()]
        .filter((session) => session.state !== 'closed' || session.liveProcess !== null)
        .sort((left, right) => (left.sessionId < right.sessionId ? -1 : left.sessionId > right.sessionId ? 1 : 0))
        .map(copy);
    },
    async listSessions({ limit, before, state }) {
      assertOpen();
      return [...sessions.values()]
        .filter((session) => (state === undefined || session.state === state) && isAfter(session, before))
        .sort(newestFirst)
        .slice(0, Math.max(0, limit))
        .map(copy);
    },
    async countSessionsByState() {
      assertOpen();
      const counts: SessionCounts = { idle: 0, running: 0, waiting: 0, closed: 0 };
      for (const session of sessions.values()) counts[session.state] += 1;
      return counts;
    },
    async getSession(sessionId) {
      assertOpen();
      const session = sessions.get(sessionId);
      return session && copy(session);
    },
    async getRun(runId) {
      assertOpen();
      const run = runs.get(runId);
      return run && copy(run);
    },
    async listRuns(sessionId) {
      assertOpen();
      return [...runs.values()].filter((run) => run.sessionId === sessionId).map(copy);
    },
    async findReceipt(commandId) {
      assertOpen();
      const receipt = receipts.get(commandId);
      return receipt && copy(receipt);
    },
    async listInteractions(sessionId, options = {}) {
      assertOpen();
      const stored = [...(interactions.get(sessionId)?.values() ?? [])];
      return stored
        .filter((interaction) => !options.openOnly || isOpenInteraction(interaction.status))
        .sort(byRequestOrder)
        .map(copy);
    },
    async getInteraction(sessionId, interactionRef) {
      assertOpen();
      const interaction = interactions.get(sessionId)?.get(interactionRef);
      return interaction && copy(interaction);
    },
    async readEvents(sessionId, { afterSeq, limit }) {
      assertOpen();
      const log = events.get(sessionId) ?? [];
      return log.slice(afterSeq, afterSeq + limit).map(copy);
    },
    async commit(unit) {
      assertOpen();
      checkSequence(unit);
      checkReceipts(unit);
      // Copied before anything is applied: a value that cannot be cloned then leaves the store untouched.
      const copied = copy(unit);
      for (const event of copied.events) {
        const log = events.get(event.sessionId) ?? [];
        log.push(event);
        events.set(event.sessionId, log);
      }
      for (const session of copied.sessions) sessions.set(session.sessionId, session);
      for (const run of copied.runs) runs.set(run.runId, run);
      for (const interaction of copied.interactions) {
        const ofSession = interactions.get(interaction.sessionId) ?? new Map<string, InteractionRecord>();
        ofSession.set(interaction.interactionRef, interaction);
        interactions.set(interaction.sessionId, ofSession);
      }
      for (const receipt of copied.receipts) receipts.set(receipt.commandId, receipt);
      for (const blob of copied.blobs) {
        if (!blobs.has(blob.sha256)) blobs.set(blob.sha256, { mediaType: blob.mediaType, bytes: blob.bytes });
        const referenced = blobReferences.get(blob.sessionId) ?? new Set<string>();
        referenced.add(blob.sha256);
        blobReferences.set(blob.sessionId, referenced);
      }
    },
    async readBlob(sessionId, sha256) {
      assertOpen();
      const blob = blobReferences.get(sessionId)?.has(sha256) ? blobs.get(sha256) : undefined;
      return blob && copy(blob);
    },
    async deleteSession(sessionId) {
      assertOpen();
      sessions.delete(sessionId);
      events.delete(sessionId);
      interactions.delete(sessionId);
      for (const [runId, run] of runs) if (run.sessionId === sessionId) runs.delete(runId);
      const referenced = blobReferences.get(sessionId) ?? new Set<string>();
      blobReferences.delete(sessionId);
      for (const sha256 of referenced) {
        const stillReferenced = [...blobReferences.values()].some((others) => others.has(sha256));
        if (!stillReferenced) blobs.delete(sha256);
      }
    },
    async close() {
      closed = true;
    },
  };
}
