import path from 'node:path';
import {
  describeBlobContract,
  describeSessionListingContract,
  describeStoreContract,
} from '@tether/testkit/store-contract';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { openSqliteStore } from './index.js';

async function makeStore() {
  const directory = await makeTemporaryDirectory();
  const store = await openSqliteStore({ dataDir: path.join(directory.path, 'data') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await directory.remove();
    },
  };
}

describeStoreContract('SQLite store', makeStore);
describeSessionListingContract('SQLite store', makeStore);
describeBlobContract('SQLite store', makeStore);
