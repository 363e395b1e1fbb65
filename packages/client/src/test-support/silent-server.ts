import { type Socket, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A hung daemon as a client meets it: a 127.0.0.1 port that accepts connections, reads what is sent and never answers. */
export interface SilentServer {
  readonly url: string;
  /** Connections accepted so far. */
  readonly connections: () => number;
  /** Resolves once `count` connections were accepted. */
  waitForConnections(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSilentServer(): Promise<SilentServer> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const waiters = new Set<() => void>();
  const server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // Reading keeps the client's request from backing up; nothing is ever written back.
    socket.resume();
    for (const waiter of [...waiters]) waiter();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    waitForConnections(count) {
      return new Promise((resolve) => {
        const check = () => {
          if (accepted < count) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
