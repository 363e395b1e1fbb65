import path from 'node:path';
import { describeStoreContract } from '../../runtime/src/store/store-contract.js';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { openSqliteStore } from './index.js';

describeStoreContract('SQLite store', async () => {
  const directory = await makeTemporaryDirectory();
  const store = await openSqliteStore({ dataDir: path.join(directory.path, 'data') });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await directory.remove();
    },
  };
});
