import { type Server, type Socket, connect, createServer } from 'node:net';

/**
 * A runtime's way to its database, through a relay the test can cut: with it cut the runtime is,
 * for the others, a dead machine (no heartbeat, no writes), and back again, a stale owner.
 */
export interface DatabaseLink {
  readonly url: string;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function openLink(url: string): Promise<DatabaseLink> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let cut = false;
  const relay: Server = createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', end);
      socket.on('close', end);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    relay.once('error', reject);
    relay.listen(0, '127.0.0.1', resolve);
  });
  const address = relay.address();
  if (address === null || typeof address === 'string') throw new Error('The relay got no port.');
  const relayed = new URL(url);
  relayed.port = String(address.port);
  return {
    url: relayed.toString(),
    cut() {
      cut = true;
      for (const socket of sockets) socket.destroy();
    },
    restore() {
      cut = false;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    },
  };
}

