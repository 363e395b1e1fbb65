import { type Socket, createServer } from 'node:net';
import { agentErrorOf } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from './index.js';

describe('a server that takes connections and never answers (stopped, or behind a firewall that drops packets)', () => {
  it('fails opening the store with store_failure, instead of waiting for ever', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const error = await agentErrorOf(openPostgresStore({ url: `postgres://tether:secret@127.0.0.1:${port}/tether` }));
      expect(error.code).toBe('store_failure');
      expect(error.message).not.toContain('secret');
      expect(sockets.size).toBeGreaterThan(0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
