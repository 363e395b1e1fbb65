// The TetherStore contract every store's tests run (the in-memory store, store-sqlite, store-postgres). A separate
// entry of the testkit because it registers vitest suites: the main entry is also loaded outside vitest (the benchmarks).
export { describeStoreContract } from './store-contract.js';
export type { StoreUnderTest } from './store-contract.js';
export { describeSessionListingContract } from './session-listing-contract.js';
export { describeBlobContract } from './blob-contract.js';
