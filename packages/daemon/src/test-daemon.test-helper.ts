import { request } from 'node:http';
import path from 'node:path';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, recordingLogger } from '@tether/testkit';
import { afterEach } from 'vitest';
import type { Daemon, DaemonOptions } from './daemon-options.js';
import { startDaemon } from './start-daemon.js';

type Recorded = ReturnType<typeof recordingLogger>;

/**
 * A real daemon (real store, the claude provider over the fake API) on a free port whose log a test
 * reads; everything it made is closed and removed after each test of the file that calls this.
 */
export function useTestDaemon(): (
  options?: Partial<DaemonOptions>,
) => Promise<{ daemon: Daemon; lines: Recorded['lines'] }> {
  const environments: ClaudeTestEnvironment[] = [];
  const daemons: Daemon[] = [];
  afterEach(async () => {
    // close() is idempotent: a test that closed its daemon already is fine.
    for (const daemon of daemons.splice(0)) await daemon.close();
    for (const environment of environments.splice(0)) await environment.cleanup();
  });
  return async (options = {}) => {
    const environment = await createClaudeTestEnvironment();
    environments.push(environment);
    const { logger, lines } = recordingLogger();
    const daemon = await startDaemon({
      dataDir: path.join(environment.home, 'tether-data'),
      port: 0,
      providers: [environment.provider()],
      logger,
      ...options,
    });
    daemons.push(daemon);
    return { daemon, lines };
  };
}

/** The status of a GET /health with a Host header of the test's choosing (fetch sets its own). */
export function statusWithHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, path: '/health', headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    sent.on('error', reject);
    sent.end();
  });
}
