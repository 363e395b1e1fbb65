// A Tether host in its own process (a runtime over a SQLite data dir, the Claude provider), started
// from the built packages, for a test to kill at a chosen moment. Settings come in TETHER_TEST_HOST
// as JSON ({ dataDir, claudePath, environment, provider }); commands come on stdin, one JSON line
// each; every published event, each receipt ({ receipt }) and each refusal ({ refused }) goes to
// stdout as one JSON line. The command { "type": "shutdown", "options": {…} } shuts the runtime down
// and ends the host.
import { createInterface } from 'node:readline';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';

const settings = JSON.parse(process.env.TETHER_TEST_HOST ?? '{}');
const runtime = await createAgentRuntime({
  providers: [
    createClaudeProvider({
      claudePath: settings.claudePath,
      environment: settings.environment,
      ...settings.provider,
    }),
  ],
  store: await openSqliteStore({ dataDir: settings.dataDir }),
});
const write = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
runtime.observe((event) => write({ event }));
write({ ready: process.pid });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.type === 'shutdown') {
    await runtime.shutdown(command.options);
    // stdout is a pipe (written asynchronously): exit once the line is out.
    process.stdout.write(`${JSON.stringify({ shutDown: true })}\n`, () => process.exit(0));
    break;
  }
  runtime.dispatch(command).then(
    (receipt) => write({ receipt }),
    (error) => write({ refused: { commandId: command.commandId, code: error.code, message: error.message } }),
  );
}
