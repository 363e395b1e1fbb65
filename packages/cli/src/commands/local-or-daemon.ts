import { existsSync } from 'node:fs';
import { AgentError, type SessionSnapshot, type SessionState } from '@tether/protocol';
import type { ClaudeTransport } from '@tether/provider-claude';
import type { CliContext } from '../cli-context.js';
import { connectDaemon } from '../connect-daemon.js';
import { createLocalRuntime } from '../local-runtime.js';
import { openStore } from '../open-store.js';
import { type StoreLocation, parseStoreLocation } from './store-option.js';
import type { TetherBackend } from '../tether-backend.js';
import type { ParsedDaemonCommand } from './daemon-options.js';

/** Tether for one command: the daemon's client, or a runtime in this process. */
export interface CommandBackend {
  readonly tether: TetherBackend;
  /** Every matching session (the daemon pages them; the runtime answers them at once). */
  listAllSessions(filter: { state?: SessionState }): Promise<SessionSnapshot[]>;
  /** True when no daemon runs and the command works on the data dir in this process. */
  readonly inProcess: boolean;
}

/** How the in-process runtime is set up when no daemon runs (a daemon uses its own set-up). */
export interface InProcessOptions {
  /**
   * 'data-dir' (default): the sessions of the data dir, or of the database --store / TETHER_STORE_URL
   * names. 'none': no sessions at all (a command that reads none, such as the model list, then never
   * waits for a data dir another process holds).
   */
  readonly store?: 'data-dir' | 'none';
  readonly transport?: ClaudeTransport;
  /** --claude-path: the binary the in-process agent runs (a daemon runs its own). */
  readonly claudePath?: string;
}

/**
 * Runs `work` against the daemon that owns the data dir (or --server), or, with no daemon, against
 * a runtime in this process over the data dir: whoever only ever used `tether run` can still list,
 * read, fork and rewind their sessions. Opening the data dir is what any owner does (a run a
 * crashed `tether run` left open is completed); one another process holds is refused, naming it.
 */
export async function withLocalOrDaemon<Result>(
  command: ParsedDaemonCommand,
  context: CliContext,
  work: (backend: CommandBackend) => Promise<Result>,
  options: InProcessOptions = {},
): Promise<Result> {
  // Read first: a bad --store (or TETHER_STORE_URL) is a usage error even when a daemon answers.
  const location =
    options.store === 'none'
      ? undefined
      : parseStoreLocation(
          typeof command.values.store === 'string' ? command.values.store : undefined,
          context.environment,
        );
  const client = await connectDaemon({
    server: command.server,
    dataDir: command.dataDir,
    environment: context.environment,
  });
  if (client)
    return work({ tether: client, listAllSessions: (filter) => client.listAllSessions(filter), inProcess: false });
  // A data dir that does not exist holds no session: the command answers so (nothing listed, or
  // session_not_found) from an empty store, without making one at a path that may be a typo.
  const nothingThere = location?.kind === 'data-dir' && !existsSync(command.dataDir);
  // Said of a --data-dir given here (a typo, most likely); the default one simply has nothing yet.
  if (nothingThere && typeof command.values['data-dir'] === 'string' && command.values.json !== true)
    context.stderr.write(
      `tether: there is no data dir at ${command.dataDir} (nothing has run there); check --data-dir or TETHER_HOME.\n`,
    );
  const store =
    location === undefined || nothingThere
      ? undefined
      : await openStoreInProcess(command.dataDir, location, context.stderr);
  const runtime = await createLocalRuntime({
    claude: {
      environment: context.environment,
      ...(options.transport ? { transport: options.transport } : {}),
      ...(options.claudePath ? { claudePath: options.claudePath } : {}),
    },
    store,
    dataDir: command.dataDir,
    environment: context.environment,
  }).catch(async (error: unknown) => {
    await store?.close();
    throw error;
  });
  try {
    return await work({ tether: runtime, listAllSessions: (filter) => runtime.listSessions(filter), inProcess: true });
  } finally {
    await runtime.shutdown();
  }
}

/**
 * The store opened in this process, for a command no daemon serves: a data dir another process holds
 * is said so, with the way to share it (tether serve), rather than as the store words it.
 */
export function openStoreInProcess(
  dataDir: string,
  location: StoreLocation,
  stderr: CliContext['stderr'],
): ReturnType<typeof openStore> {
  return openStore(dataDir, location, { onNotice: (notice) => stderr.write(`tether: ${notice}\n`) }).catch(
    (error: unknown) => {
      throw AgentError.isInstance(error) && error.code === 'data_dir_in_use'
        ? inUseByAnotherProcess(dataDir, error)
        : error;
    },
  );
}

function inUseByAnotherProcess(dataDir: string, error: AgentError): AgentError {
  const ownerPid = error.details?.ownerPid;
  const who =
    typeof ownerPid === 'number'
      ? `process ${ownerPid} (a tether run, a tether acp an editor started, or another program using Tether in-process, not a daemon)`
      : 'another process';
  return new AgentError({
    code: 'data_dir_in_use',
    message: `No Tether daemon is running for ${dataDir}, and ${who} holds it, so it cannot be read now. Try again when that process has finished (or stop it), or run \`tether serve\` so every command shares the data dir through the daemon (tether run, send and acp then go through it: several editors, and acpx, at once).`,
    ...(error.details ? { details: error.details } : {}),
  });
}
