import { afterAll, beforeAll } from 'vitest';
import { type TestPostgres, startTestPostgres } from './test-postgres.js';

/** One real server for the test file that calls this (started before its tests, stopped after); call the result inside a test. */
export function useTestPostgres(): () => TestPostgres {
  let server: TestPostgres | undefined;
  beforeAll(async () => {
    server = await startTestPostgres();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (server === undefined) throw new Error('The test PostgreSQL server has not started.');
    return server;
  };
}
