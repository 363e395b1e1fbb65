// A daemon in its own process, started from the built packages (as `tether serve` would run it), so
// a test can SIGKILL it. Settings come in TETHER_TEST_DAEMON as JSON; the URL and token go to stdout.
import { startDaemon } from '@tether/daemon';
import { createClaudeProvider } from '@tether/provider-claude';

const settings = JSON.parse(process.env.TETHER_TEST_DAEMON ?? '{}');
const daemon = await startDaemon({
  dataDir: settings.dataDir,
  port: 0,
  providers: [createClaudeProvider({ claudePath: settings.claudePath, environment: settings.environment })],
  logger: { level: 'silent' },
});
process.stdout.write(`${JSON.stringify({ url: daemon.url, token: daemon.token, pid: process.pid })}\n`);
