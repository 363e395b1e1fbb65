import {
  describeBlobContract,
  describeSessionListingContract,
  describeStoreContract,
} from '@tether/testkit/store-contract';
import type { ProtocolEvent } from '@tether/protocol';
import type { InteractionRecord } from '@tether/runtime';
import { agentErrorOf, sampleApprovalRequest, sampleSessionRecord } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { diagnosticEvents, seqs, unitOf } from './__fixtures__/database-fixtures.js';
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

describe('PostgreSQL store: a unit of several sessions, checked and written in one statement each', () => {
  const sessionIds = ['a', 'b', 'c'].map((letter) => `ses_${letter.repeat(32)}`);
  const eventsOf = (sessionId: string, from: number, to: number) => diagnosticEvents(sessionId, from, to);

  it('refuses the whole unit when one session is not at the seq it expects, moving no head', async () => {
    const { store, cleanup } = await makeStore();
    try {
      const [first, second, third] = sessionIds as [string, string, string];
      await store.commit(unitOf([...eventsOf(first, 1, 2), ...eventsOf(second, 1, 2), ...eventsOf(third, 1, 1)]));
      // The second session is at 2: a unit that expects it at 1 (its events start at 2) is refused whole.
      const refused = await agentErrorOf(
        store.commit(
          unitOf(
            [...eventsOf(first, 3, 4), ...eventsOf(second, 2, 3), ...eventsOf(third, 2, 2)],
            sessionIds.map((sessionId) => sampleSessionRecord({ sessionId, state: 'closed' })),
          ),
        ),
      );
      expect(refused).toMatchObject({ code: 'store_failure', details: { reason: 'sequence_conflict' } });
      expect(refused.message).toContain('event 2 of a session whose next event is 3');
      expect(await store.loadSessions()).toEqual([]);

      // The heads stayed: the unit made from them lands, each session's record once (its last).
      await store.commit(
        unitOf(
          [...eventsOf(first, 3, 3), ...eventsOf(second, 3, 3), ...eventsOf(third, 2, 2)],
          [
            sampleSessionRecord({ sessionId: second, lastSeq: 2 }),
            sampleSessionRecord({ sessionId: first, lastSeq: 3 }),
            sampleSessionRecord({ sessionId: second, lastSeq: 3 }),
            sampleSessionRecord({ sessionId: third, lastSeq: 2 }),
          ],
        ),
      );
      expect((await store.loadSessions()).map(({ sessionId, lastSeq }) => [sessionId, lastSeq])).toEqual([
        [second, 3],
        [first, 3],
        [third, 2],
      ]);
      for (const [sessionId, last] of [
        [first, 3],
        [second, 3],
        [third, 2],
      ] as const)
        expect(seqs(await store.readEvents(sessionId, { afterSeq: 0, limit: 10 }))).toEqual(
          Array.from({ length: last }, (_, index) => index + 1),
        );
    } finally {
      await cleanup();
    }
  });
});

describe('PostgreSQL store: a URL that asks for SSL a server does not offer', () => {
  it('fails opening with store_failure saying so and what to do, the password in no message', async () => {
    const url = new URL(await server().createDatabase());
    url.searchParams.set('sslmode', 'require');
    const error = await agentErrorOf(openPostgresStore({ url: url.toString() }));
    expect(error.code).toBe('store_failure');
    expect(error.message).toContain('The server takes no SSL connections and the store URL asks for SSL (sslmode)');
    expect(error.message).not.toContain(url.password);
  });
});
