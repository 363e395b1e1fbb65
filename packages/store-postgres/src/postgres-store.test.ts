import {
  describeBlobContract,
  describeSessionListingContract,
  describeStoreContract,
} from '@tether/testkit/store-contract';
import type { ProtocolEvent } from '@tether/protocol';
import type { InteractionRecord } from '@tether/runtime';
import { sampleApprovalRequest, sampleSessionRecord } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useTestServer } from './__fixtures__/test-server.js';
import { openPostgresStore } from './index.js';

// One real server for the file, a fresh database for each test.
const server = useTestServer();

async function makeStore() {
  const store = await openPostgresStore({ url: await server().createDatabase() });
  return { store, cleanup: () => store.close() };
}

describeStoreContract('PostgreSQL store', makeStore);
describeSessionListingContract('PostgreSQL store', makeStore);
describeBlobContract('PostgreSQL store', makeStore);

describe('PostgreSQL store: text PostgreSQL text columns cannot hold', () => {
  it('round-trips NUL characters and lone surrogates in titles, events and interactions', async () => {
    const { store, cleanup } = await makeStore();
    try {
      const sessionId = `ses_${'a'.repeat(32)}`;
      const runId = `run_${'c'.repeat(32)}`;
      const awkward = 'before\u0000after \ud800 "quoted" \\ back';
      const session = sampleSessionRecord({ sessionId, title: awkward, lastSeq: 1 });
      const event: ProtocolEvent = {
        type: 'run.message_delta',
        sessionId,
        seq: 1,
        at: session.createdAt,
        runId,
        blockId: 'block-1',
        text: awkward,
      };
      const interaction: InteractionRecord = {
        interactionRef: `int_${'1'.repeat(32)}`,
        sessionId,
        runId,
        status: 'pending',
        request: sampleApprovalRequest({ input: { command: awkward } }),
        requestedAt: session.createdAt,
        settledAt: null,
      };
      await store.commit({
        events: [event],
        sessions: [session],
        runs: [],
        interactions: [interaction],
        receipts: [],
        blobs: [],
      });

      expect(await store.getSession(sessionId)).toEqual(session);
      expect(await store.readEvents(sessionId, { afterSeq: 0, limit: 10 })).toEqual([event]);
      expect(await store.getInteraction(sessionId, interaction.interactionRef)).toEqual(interaction);
    } finally {
      await cleanup();
    }
  });
});
