import { startTestPostgres, type TestPostgres } from '@tether/testkit';
import { afterAll, beforeAll } from 'vitest';

/** One real server for the test file that calls this (started before its tests, stopped after); call the result inside a test. */
export function useTestServer(): () => TestPostgres {
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
