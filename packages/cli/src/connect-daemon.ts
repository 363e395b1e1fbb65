import { createTetherClient, type TetherClient } from '@tether/client';
import { readDaemonInfo, readToken } from '@tether/daemon';
import { UsageError } from './usage-error.js';

/**
 * The daemon to talk to: the one at `server` (token from TETHER_TOKEN or the data dir), or the
 * local daemon that owns the data dir (found from its daemon.json, no copy-paste needed); null when
 * there is none.
 */
export async function connectDaemon(options: {
  server?: string | undefined;
  dataDir: string;
  environment: Readonly<Record<string, string | undefined>>;
}): Promise<TetherClient | null> {
  if (options.server !== undefined) {
    const token = options.environment.TETHER_TOKEN ?? (await readToken(options.dataDir));
    if (!token)
      throw new UsageError(
        `No token for ${options.server}: set TETHER_TOKEN (shown by \`tether token\` on the daemon's machine).`,
      );
    return createTetherClient({ url: options.server, token });
  }
  // Null as well when the daemon that wrote daemon.json has gone (readDaemonInfo asks the data dir's lock).
  const info = await readDaemonInfo(options.dataDir);
  if (!info) return null;
  const token = options.environment.TETHER_TOKEN ?? (await readToken(options.dataDir));
  if (!token) return null;
  return createTetherClient({ url: info.url, token });
}

/** Like connectDaemon, but a daemon is required: says how to start one when there is none. */
export async function requireDaemon(options: {
  server?: string | undefined;
  dataDir: string;
  environment: Readonly<Record<string, string | undefined>>;
}): Promise<TetherClient> {
  const client = await connectDaemon(options);
  if (!client)
    throw new UsageError(
      `No Tether daemon is running for ${options.dataDir}. Start one with \`tether serve\`, or pass --server URL.`,
    );
  return client;
}
