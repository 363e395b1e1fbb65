import type { Migration } from './migration.js';

// Where each runtime's unbroken run of heartbeats began, by the database's clock: set at its first
// renewal, and again at a renewal after one that failed or after one more than two beats late. A
// runtime judges another dead only once that other has missed a whole ttl of renewals since then,
// so an outage they all shared (the database down, the network cut, every process paused) moves no
// session between runtimes that are alive (lease-statements.ts, holderDead). Nullable: a row an
// older Tether renews has none, and such a runtime judges as it did.
export const runtimeRenewalRunsMigration: Migration = {
  version: 4,
  name: 'runtime renewal runs',
  sql: `
    ALTER TABLE runtimes ADD COLUMN renewing_since timestamptz;
  `,
};
