import { createInMemoryStore } from './in-memory-store.js';
import { describeSessionListingContract } from './session-listing-contract.js';
import { describeStoreContract } from './store-contract.js';

async function makeStore() {
  const store = createInMemoryStore();
  return { store, cleanup: () => store.close() };
}

describeStoreContract('in-memory store', makeStore);
describeSessionListingContract('in-memory store', makeStore);
