import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { SessionRecord } from '@tether/runtime';
import { columnOf, type NamedParameters, sessionFieldParameters } from './record-rows.js';

/**
 * How many differently shaped updates are prepared at most. A session's life changes a handful of
 * field sets over and over (a streamed turn's progress, a run starting, a run ending); anything past
 * the bound is written as a whole row, which is always right.
 */
const maximumShapes = 64;

/**
 * The fields of `next` that differ from the record last stored, sorted; null when one of them has no
 * columns here. Records are never changed in place (the runtime copies one to change it), so a field
 * holding the same value or object is unchanged: nothing is serialized to find out. A field whose
 * object was replaced by an equal one counts as changed (its column is written again; still right).
 */
function changedFields(stored: SessionRecord, next: SessionRecord): string[] | null {
  const before = stored as unknown as Record<string, unknown>;
  const after = next as unknown as Record<string, unknown>;
  const changed: string[] = [];
  for (const field in after) if (after[field] !== before[field]) changed.push(field);
  for (const field in before) if (!(field in after)) changed.push(field);
  if (changed.some((field) => !Object.hasOwn(sessionFieldParameters, field))) return null;
  return changed.sort();
}

/**
 * Writes a session whose row this connection stored last with only the columns its commit changed.
 * The whole-row upsert bound and wrote all 27 columns (six of them serialized JSON) for every commit
 * that moved a session, and named the listing indexes' columns whether they changed or not: a run's
 * start and end, each on the path to the host, paid for it. Here a streamed delta writes its seq and
 * times, a run's end its state, run and usage, and an index is written only when its columns change.
 */
export class SessionUpdates {
  private readonly database: DatabaseSync;
  private readonly statements = new Map<string, StatementSync>();

  constructor(database: DatabaseSync) {
    this.database = database;
  }

  /** false when it did not (a field without columns, too many shapes, no row): the caller upserts the whole row. */
  write(stored: SessionRecord, next: SessionRecord): boolean {
    const fields = changedFields(stored, next);
    if (fields === null) return false;
    if (fields.length === 0) return true;
    const parameters: NamedParameters = {};
    for (const field of fields) sessionFieldParameters[field as keyof SessionRecord](next, parameters);
    const statement = this.statementFor(fields.join(','), Object.keys(parameters));
    if (!statement) return false;
    // Bound by position, in the order the statement names them: binding by name cost ~2-3 µs a
    // parameter more on a busy machine, measured.
    // A row that is not there (it never is: this connection wrote it, and holds the database) is upserted.
    return statement.run(...Object.values(parameters), next.sessionId).changes === 1;
  }

  /** The update of one shape (its fields), prepared on first use over the columns those fields write. */
  private statementFor(shape: string, parameters: readonly string[]): StatementSync | undefined {
    const prepared = this.statements.get(shape);
    if (prepared || this.statements.size >= maximumShapes) return prepared;
    const assignments = parameters.map((parameter) => `${columnOf(parameter)} = ?`);
    const statement = this.database.prepare(`UPDATE sessions SET ${assignments.join(', ')} WHERE session_id = ?`);
    this.statements.set(shape, statement);
    return statement;
  }
}
