export { databaseFileName, openSqliteStore } from './open-sqlite-store.js';
export { databaseSchemaRefusal } from './migrations/apply-migrations.js';
export type { SqliteStoreOptions } from './open-sqlite-store.js';
export type { SqliteStore } from './sqlite-store.js';
export { resolveDataDir, resolveGivenPath } from './resolve-data-dir.js';
export { dataDirectoryLockOwner } from './data-directory-lock.js';
export { lockDataDirectory } from './data-directory.js';
export { dataDirectoryRefusal, ensureDataDirectory, readPrivateDataFile } from './private-data-files.js';
export type { ResolveDataDirOptions } from './resolve-data-dir.js';

export const VERSION = '0.1.0';
