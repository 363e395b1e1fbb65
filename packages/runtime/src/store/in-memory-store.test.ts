import { createInMemoryStore } from './in-memory-store.js';
import { describeStoreContract } from './store-contract.js';

describeStoreContract('in-memory store', async () => {
  const store = createInMemoryStore();
  return { store, cleanup: () => store.close() };
});
