import {
  describeBlobContract,
  describeSessionListingContract,
  describeStoreContract,
} from '@tether/testkit/store-contract';
import { createInMemoryStore } from './in-memory-store.js';

async function makeStore() {
  const store = createInMemoryStore();
  return { store, cleanup: () => store.close() };
}

describeStoreContract('in-memory store', makeStore);
describeSessionListingContract('in-memory store', makeStore);
describeBlobContract('in-memory store', makeStore);
