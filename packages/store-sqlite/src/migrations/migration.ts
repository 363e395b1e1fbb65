import type { DatabaseSync } from 'node:sqlite';

/** One step of the schema. Versions are never reused or edited once released: add a new one. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** Fills what the new schema holds from what the database already has; runs after `sql`, in the same transaction. */
  readonly backfill?: (database: DatabaseSync) => void;
}
