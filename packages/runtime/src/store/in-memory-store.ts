import { AgentError, type ProtocolEvent } from '@tether/protocol';
import type { CommitUnit, RunRecord, SessionRecord, StoredReceipt, TetherStore } from './tether-store.js';

function copy<T>(value: T): T {
  return structuredClone(value);
}

/** A store that keeps everything in memory: for unit tests and throwaway hosts. */
export function createInMemoryStore(): TetherStore {
  const sessions = new Map<string, SessionRecord>();
  const runs = new Map<string, RunRecord>();
  const receipts = new Map<string, StoredReceipt>();
  const events = new Map<string, ProtocolEvent[]>();
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new AgentError({ code: 'store_failure', message: 'The store is closed. Create a new runtime to continue.' });
  }

  function checkSequence(unit: CommitUnit): void {
    const next = new Map<string, number>();
    for (const event of unit.events) {
      const expected = (next.get(event.sessionId) ?? (events.get(event.sessionId)?.length ?? 0)) + 1;
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

  return {
    kind: 'memory',
    async loadSessions() {
      assertOpen();
      return [...sessions.values()].map(copy);
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
    async readEvents(sessionId, { afterSeq, limit }) {
      assertOpen();
      const log = events.get(sessionId) ?? [];
      return log.slice(afterSeq, afterSeq + limit).map(copy);
    },
    async commit(unit) {
      assertOpen();
      checkSequence(unit);
      for (const event of unit.events) {
        const log = events.get(event.sessionId) ?? [];
        log.push(copy(event));
        events.set(event.sessionId, log);
      }
      for (const session of unit.sessions) sessions.set(session.sessionId, copy(session));
      for (const run of unit.runs) runs.set(run.runId, copy(run));
      for (const receipt of unit.receipts) receipts.set(receipt.commandId, copy(receipt));
    },
    async close() {
      closed = true;
    },
  };
}
