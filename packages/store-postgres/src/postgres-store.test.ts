import {
  describeBlobContract,
  describeSessionListingContract,
  describeStoreContract,
} from '@tether/testkit/store-contract';
import { startTestPostgres, type TestPostgres } from '@tether/testkit';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from './index.js';

// One real server for the file, a fresh database for each test.
let server: TestPostgres | undefined;
beforeAll(async () => {
  server = await startTestPostgres();
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

async function makeStore() {
  const store = await openPostgresStore({ url: await server!.createDatabase() });
  return { store, cleanup: () => store.close() };
}

describeStoreContract('PostgreSQL store', makeStore);
describeSessionListingContract('PostgreSQL store', makeStore);
describeBlobContract('PostgreSQL store', makeStore);
