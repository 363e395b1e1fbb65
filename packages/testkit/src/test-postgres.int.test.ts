import { readFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestPostgres } from './test-postgres.js';

function listenOn(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

describe('the test PostgreSQL server', () => {
  it('listens below the ephemeral ports; a restart refused its port says why, and stop() still ends', async () => {
    const postgres = await startTestPostgres();
    const blockers: Server[] = [];
    try {
      const port = Number(new URL(await postgres.createDatabase()).port);
      const [ephemeralStart] = (await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')).trim().split(/\s+/);
      expect(port).toBeLessThan(Number(ephemeralStart));

      const restarted = postgres.restart({ whileStopped: async () => void blockers.push(await listenOn(port)) });
      await expect(restarted).rejects.toThrow(
        new RegExp(`did not start again after its outage \\(port ${port}\\)[^]*could not bind`),
      );
    } finally {
      for (const blocker of blockers) blocker.close();
      await postgres.stop();
    }
  });
});
