import { type ConnectionState, type TetherClient, createTetherClient } from '@tether/client';
import { readDaemonInfo, readToken, tokenFilePath } from '@tether/daemon';
import { AgentError } from '@tether/protocol';
import { dataDirDaemonClient } from './data-dir-daemon-client.js';
import type { Output } from './render/human-renderer.js';
import { UsageError } from './usage-error.js';

/** Where a followed session's "daemon not answering" lines go, and how its reader stops waiting (default: Ctrl-C). */
interface NoticeOutput extends Output {
  readonly stopHint?: string;
}

interface DaemonLocation {
  server?: string | undefined;
  dataDir: string;
  environment: Readonly<Record<string, string | undefined>>;
  /**
   * Where an event subscription says that the daemon stopped answering (once, until it answers
   * again, which it says too); without it a subscription reconnects silently.
   */
  notices?: NoticeOutput | undefined;
}

/**
 * The daemon to talk to: the one at `server` (token from TETHER_TOKEN or the data dir), or the
 * local daemon that owns the data dir (found from its daemon.json, no copy-paste needed); null when
 * there is none.
 */
export async function connectDaemon(options: DaemonLocation): Promise<TetherClient | null> {
  if (options.server !== undefined) {
    checkDaemonUrl(options.server);
    const token = options.environment.TETHER_TOKEN ?? (await readToken(options.dataDir));
    if (!token)
      throw new UsageError(
        `No token for ${options.server}: set TETHER_TOKEN (shown by \`tether token\` on the daemon's machine).`,
      );
    return clientOf(options.server, token, options.notices);
  }
  // Null as well when the daemon that wrote daemon.json has gone (readDaemonInfo asks the data dir's lock).
  const info = await readDaemonInfo(options.dataDir);
  if (!info) return null;
  const token = options.environment.TETHER_TOKEN ?? (await readToken(options.dataDir));
  // A daemon runs on the data dir: a command must not go on as if it did not (and then find the dir taken).
  if (!token)
    throw new UsageError(
      `The daemon at ${info.url} (pid ${info.pid}) runs on ${options.dataDir}, but its token file (${tokenFilePath(options.dataDir)}) is gone. Set TETHER_TOKEN to its token, or restart it (\`tether serve\` writes the file again).`,
    );
  const daemon = dataDirDaemonClient(info.url, token, options);
  return options.notices ? withConnectionNotices(daemon.client, daemon.url, options.notices) : daemon.client;
}

/**
 * --server names the daemon by its URL, scheme included. Without one ("127.0.0.1:7437", "localhost:7437")
 * no request can reach it, and "the daemon is not reachable" would send the user looking for a daemon
 * that is in fact running.
 */
function checkDaemonUrl(server: string): void {
  const protocol = URL.canParse(server) ? new URL(server).protocol : null;
  if (protocol === 'http:' || protocol === 'https:') return;
  const suggestion = protocol === null || !server.includes('//') ? ` (http://${server}?)` : '';
  throw new UsageError(
    `--server takes the daemon's URL, starting with http:// or https:// as \`tether serve\` prints it ("listening on http://…"), not "${server}"${suggestion}.`,
  );
}

/** Like connectDaemon, but a daemon is required: says how to start one when there is none. */
export async function requireDaemon(options: DaemonLocation): Promise<TetherClient> {
  const client = await connectDaemon(options);
  if (client) return client;
  // A process running Tether in-process holds the data dir: `tether serve` cannot start until it ends.
  const owner =
    options.server === undefined
      ? (await import('@tether/store-sqlite')).dataDirectoryLockOwner(options.dataDir)
      : null;
  if (owner?.running === true && owner.pid !== process.pid)
    throw new AgentError({
      code: 'data_dir_in_use',
      message: `No Tether daemon is running for ${options.dataDir}, and process ${owner.pid} (a tether run, or a tether acp an editor started) holds it: this command needs a daemon, and \`tether serve\` cannot start while that process holds the data dir. Wait for it to end (or stop it: Ctrl-C where it runs), then start \`tether serve\`; or pass --server URL.`,
      details: { ownerPid: owner.pid },
    });
  throw new UsageError(
    `No Tether daemon is running for ${options.dataDir}. Start one with \`tether serve\`, or pass --server URL.`,
  );
}

function clientOf(url: string, token: string, notices: NoticeOutput | undefined): TetherClient {
  const client = createTetherClient({ url, token });
  return notices ? withConnectionNotices(client, () => url, notices) : client;
}

/** How long a subscription goes without its stream before it says so: a stream the daemon only cut short comes back sooner. */
const quietBeforeNoticeMs = 1_000;

/**
 * The client, its subscriptions telling `notices` when the daemon has not answered for a moment
 * (stopped, restarting, out of reach) and when it answers again. They keep reconnecting as before
 * (every `tether` command that follows a session: run and send through a daemon, attach): the line
 * only says why nothing is happening, and how to stop waiting.
 */
function withConnectionNotices(client: TetherClient, urlNow: () => string, notices: NoticeOutput): TetherClient {
  return {
    ...client,
    async *subscribe(sessionId, options = {}) {
      // The address named in the "not answering" line: the daemon may answer again at another.
      let told: string | null = null;
      let quiet: NodeJS.Timeout | undefined;
      const onConnectionChange = (state: ConnectionState) => {
        options.onConnectionChange?.(state);
        if (state === 'reconnecting') {
          // Once per loss, however many attempts it takes.
          if (quiet !== undefined || told !== null) return;
          quiet = setTimeout(() => {
            quiet = undefined;
            told = urlNow();
            notices.write(
              `\n■ the daemon at ${told} is not answering; reconnecting…${notices.stopHint ?? ' (Ctrl-C to stop waiting)'}\n`,
            );
          }, quietBeforeNoticeMs);
          quiet.unref();
          return;
        }
        clearTimeout(quiet);
        quiet = undefined;
        if (told === null) return;
        const now = urlNow();
        notices.write(
          now === told ? `■ the daemon at ${now} answers again\n` : `■ the daemon answers again, now at ${now}\n`,
        );
        told = null;
      };
      try {
        yield* client.subscribe(sessionId, { ...options, onConnectionChange });
      } finally {
        clearTimeout(quiet);
      }
    },
  };
}
