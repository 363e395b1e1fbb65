import { agent, methods, ndJsonStream } from '@agentclientprotocol/sdk';
import type { RunAcpAgentOptions } from './acp-host.js';
import { toRequestError } from './acp-errors.js';
import { TetherAcpAgent } from './tether-acp-agent.js';

/** A handler whose Tether errors reach the client as JSON-RPC errors carrying Tether's code. */
function answering<Context, Result>(
  handle: (context: Context) => Promise<Result>,
): (context: Context) => Promise<Result> {
  return async (context) => {
    try {
      return await handle(context);
    } catch (error) {
      throw toRequestError(error);
    }
  };
}

/**
 * Serves one ACP client over newline-delimited JSON (stdin/stdout for `tether acp`). Resolves when
 * the client closes the connection, after ending what it left: its open approvals denied, the runs
 * its prompts were waiting for interrupted (left running with runsOutliveClient), its sessions no
 * longer followed (they stay open in Tether).
 */
export async function runAcpAgent(options: RunAcpAgentOptions): Promise<void> {
  const tether = new TetherAcpAgent(options.host, options.log, {
    ...(options.runsOutliveClient !== undefined ? { runsOutliveClient: options.runsOutliveClient } : {}),
  });
  const app = agent({ name: 'tether' })
    .onRequest(
      methods.agent.initialize,
      answering(({ params }) => tether.initialize(params)),
    )
    .onRequest(
      methods.agent.session.new,
      answering(({ params }) => tether.newSession(params)),
    )
    .onRequest(
      methods.agent.session.load,
      answering(({ params }) => tether.loadSession(params.sessionId, params.cwd)),
    )
    .onRequest(
      methods.agent.session.resume,
      answering(({ params }) => tether.resumeSession(params.sessionId, params.cwd)),
    )
    .onRequest(
      methods.agent.session.list,
      answering(({ params }) => tether.listSessions(params)),
    )
    .onRequest(
      methods.agent.session.close,
      answering(async ({ params }) => {
        await tether.closeSession(params.sessionId);
        return {};
      }),
    )
    .onRequest(
      methods.agent.session.prompt,
      answering(({ params }) => tether.prompt(params)),
    )
    .onRequest(
      methods.agent.session.setMode,
      answering(async ({ params }) => {
        await tether.setMode(params.sessionId, params.modeId);
        return {};
      }),
    )
    .onRequest(
      methods.agent.session.setConfigOption,
      answering(async ({ params }) => ({ configOptions: await tether.setConfigOption(params) })),
    )
    .onNotification(methods.agent.session.cancel, ({ params }) => tether.cancel(params.sessionId));
  const connection = app.connect(ndJsonStream(options.output, options.input));
  tether.bind(connection.client);
  options.log.info('acp connection open');
  await connection.closed;
  await tether.dispose();
  options.log.info('acp connection closed');
}
