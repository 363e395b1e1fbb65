/** One step of the schema. Versions are never reused or edited once released: add a new one. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}
