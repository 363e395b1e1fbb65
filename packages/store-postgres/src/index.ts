export { checkPostgresStore } from './check-postgres-store.js';
export type { PostgresStoreCheck } from './check-postgres-store.js';
export { openPostgresStore } from './open-postgres-store.js';
export type { PostgresStoreOptions } from './open-postgres-store.js';

export const VERSION = '0.1.0';
