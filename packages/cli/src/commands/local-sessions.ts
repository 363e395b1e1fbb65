import { AgentError, type SessionSnapshot, type SessionState } from '@tether/protocol';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { connectDaemon } from '../connect-daemon.js';
import type { ParsedDaemonCommand } from './daemon-options.js';

/** What `tether sessions` and `tether show` read, from a daemon or from the data dir itself. */
export interface SessionReader {
  listAllSessions(filter: { state?: SessionState }): Promise<SessionSnapshot[]>;
  getSession(sessionId: string): Promise<SessionSnapshot>;
}

/**
 * Runs `work` against the daemon that owns the data dir (or --server), or, with no daemon, against
 * the data dir opened in this process: whoever only ever used `tether run` can still list and read
 * their sessions. Opening it is what any owner does (a run a crashed `tether run` left open is
 * completed); a data dir another process holds is refused, naming that process.
 */
export async function withSessionReader<Result>(
  command: ParsedDaemonCommand,
  context: CliContext,
  work: (reader: SessionReader) => Promise<Result>,
): Promise<Result> {
  const client = await connectDaemon({
    server: command.server,
    dataDir: command.dataDir,
    environment: context.environment,
  });
  if (client) return work(client);
  const store = await openSqliteStore({ dataDir: command.dataDir }).catch((error: unknown) => {
    throw AgentError.isInstance(error) && error.code === 'data_dir_in_use'
      ? inUseByAnotherProcess(command.dataDir, error)
      : error;
  });
  const runtime = await createAgentRuntime({
    providers: [createClaudeProvider({ environment: context.environment })],
    store,
  }).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  try {
    return await work({
      listAllSessions: (filter) => runtime.listSessions(filter),
      getSession: (sessionId) => runtime.getSession(sessionId),
    });
  } finally {
    await runtime.shutdown();
  }
}

function inUseByAnotherProcess(dataDir: string, error: AgentError): AgentError {
  const ownerPid = error.details?.ownerPid;
  const who =
    typeof ownerPid === 'number'
      ? `process ${ownerPid} (a tether run or another program using Tether in-process, not a daemon)`
      : 'another process';
  return new AgentError({
    code: 'data_dir_in_use',
    message: `No Tether daemon is running for ${dataDir}, and ${who} holds it, so it cannot be read now. Try again when that process has finished (or stop it), or run \`tether serve\` so every command shares the data dir through the daemon.`,
    ...(error.details ? { details: error.details } : {}),
  });
}
