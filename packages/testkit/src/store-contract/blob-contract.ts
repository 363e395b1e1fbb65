// Test-only (it registers vitest suites): reached through @tether/testkit/store-contract, never the main entry.
import { createHash } from 'node:crypto';
import type { ProtocolEvent } from '@tether/protocol';
import type { BlobRecord, TetherStore } from '@tether/runtime';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type StoreUnderTest,
  expectStoreFailure,
  runRecord,
  sessionRecord,
  storePerTest,
  unit,
} from './store-contract.js';

const sessionId = `ses_${'a'.repeat(32)}`;
const forkId = `ses_${'b'.repeat(32)}`;
const strangerId = `ses_${'e'.repeat(32)}`;
const runId = `run_${'c'.repeat(32)}`;
const at = '2025-01-02T03:04:05.000Z';

/** Bytes with every byte value (a NUL and high bytes must survive the store), made distinct by `salt`. */
function bytesOf(salt: number): Uint8Array {
  return Uint8Array.from({ length: 600 }, (_, index) => (index + salt) % 256);
}

function blob(bytes: Uint8Array, session = sessionId, mediaType = 'image/png'): BlobRecord {
  return { sha256: createHash('sha256').update(bytes).digest('hex'), mediaType, bytes, sessionId: session };
}

function openedEvent(session: string, seq: number): ProtocolEvent {
  return {
    type: 'session.opened',
    sessionId: session,
    seq,
    at,
    provider: 'claude',
    workspace: { kind: 'directory', path: '/work/project' },
    configuration: {},
    ephemeral: false,
    reopened: false,
  };
}

/** Blobs (a turn's images) and what forks and rewinds keep on records. Run with describeStoreContract. */
export function describeBlobContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`${name}: TetherStore blobs, forks and checkpoints`, () => {
    const currentStore = storePerTest(makeStore);
    let store: TetherStore;
    beforeEach(() => {
      store = currentStore();
    });

    const read = async (session: string, stored: BlobRecord) => {
      const found = await store.readBlob(session, stored.sha256);
      return found && { mediaType: found.mediaType, bytes: [...found.bytes] };
    };
    const expected = (stored: BlobRecord) => ({ mediaType: stored.mediaType, bytes: [...stored.bytes] });

    it('reads a blob back with its unit, byte for byte, only for the session that refers to it', async () => {
      const image = blob(bytesOf(1), sessionId, 'image/webp');
      await store.commit(
        unit({
          events: [openedEvent(sessionId, 1)],
          sessions: [sessionRecord(sessionId, { lastSeq: 1 })],
          blobs: [image],
        }),
      );
      expect(await read(sessionId, image)).toEqual(expected(image));
      expect(await store.readBlob(strangerId, image.sha256)).toBeUndefined();
      expect(await store.readBlob(sessionId, blob(bytesOf(2)).sha256)).toBeUndefined();
    });

    it('writes no blob of a unit it refuses', async () => {
      const image = blob(bytesOf(3));
      await store.commit(unit({ events: [openedEvent(sessionId, 1)] }));
      await expectStoreFailure(
        store.commit(unit({ events: [openedEvent(sessionId, 1)], blobs: [image] })),
        'sequence_conflict',
      );
      expect(await store.readBlob(sessionId, image.sha256)).toBeUndefined();
    });

    it('keeps a blob two sessions refer to until the last of them is deleted', async () => {
      const shared = blob(bytesOf(4));
      const own = blob(bytesOf(5));
      await store.commit(unit({ sessions: [sessionRecord(sessionId)], blobs: [shared, own] }));
      // The fork carries the same bytes again (committed twice: stored once, referenced by both).
      await store.commit(unit({ sessions: [sessionRecord(forkId)], blobs: [{ ...shared, sessionId: forkId }] }));
      await store.commit(unit({ blobs: [{ ...shared, sessionId: forkId }] }));

      await store.deleteSession(sessionId);
      expect(await store.readBlob(sessionId, shared.sha256)).toBeUndefined();
      expect(await store.readBlob(sessionId, own.sha256)).toBeUndefined();
      expect(await read(forkId, shared)).toEqual(expected(shared));

      // A session that refers to the bytes anew, after they were the deleted session's alone, gets them back whole.
      await store.commit(unit({ blobs: [{ ...own, sessionId: strangerId }] }));
      expect(await read(strangerId, own)).toEqual(expected(own));

      await store.deleteSession(forkId);
      expect(await store.readBlob(forkId, shared.sha256)).toBeUndefined();
      expect(await read(strangerId, own)).toEqual(expected(own));
    });

    it('round-trips a fork origin, a pending conversation copy and a run checkpoint, and clears them', async () => {
      const fork = sessionRecord(forkId, {
        forkedFrom: { sessionId, runId },
        copyConversation: { providerSessionId: 'conversation-1', afterMessageId: 'message-9' },
      });
      const wholeCopy = sessionRecord(sessionId, {
        forkedFrom: { sessionId: strangerId, runId: null },
        copyConversation: { providerSessionId: 'conversation-2', afterMessageId: null },
      });
      const checkpointed = runRecord(runId, {
        status: 'completed',
        outcome: 'succeeded',
        completedAt: at,
        checkpoint: { providerSessionId: 'conversation-1', inputMessageId: 'message-1', lastMessageId: 'message-9' },
      });
      await store.commit(unit({ sessions: [fork, wholeCopy], runs: [checkpointed] }));
      expect(await store.getSession(forkId)).toEqual(fork);
      expect(await store.getSession(sessionId)).toEqual(wholeCopy);
      expect(await store.getRun(runId)).toEqual(checkpointed);
      expect(await store.listRuns(sessionId)).toEqual([checkpointed]);

      const started = { ...fork, copyConversation: null, providerSessionId: 'conversation-3' };
      const unanswered = { ...checkpointed, checkpoint: { ...checkpointed.checkpoint!, lastMessageId: null } };
      await store.commit(unit({ sessions: [started], runs: [unanswered] }));
      expect(await store.getSession(forkId)).toEqual(started);
      expect(await store.getRun(runId)).toEqual(unanswered);
    });
  });
}
