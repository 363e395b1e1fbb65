import { createContext, useContext } from 'react';
import type { ProviderCapabilities } from '@tether/protocol';
import type { TetherClient } from '@tether/client';

/** What every view needs from the connection: the client, what providers can do, and a way out on 401. */
export interface DaemonConnection {
  readonly client: TetherClient;
  /** Capabilities by provider name; empty until the daemon answered. */
  readonly capabilities: Readonly<Record<string, ProviderCapabilities>>;
  /** Call when the daemon refused the token (rotated): the app asks for it again. */
  readonly tokenRefused: () => void;
}

export const DaemonContext = createContext<DaemonConnection | null>(null);

export function useDaemon(): DaemonConnection {
  const connection = useContext(DaemonContext);
  if (connection === null) throw new Error('useDaemon is used outside the connected app.');
  return connection;
}
