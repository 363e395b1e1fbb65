// A Tether host in its own process, started from the built packages, for a test to SIGKILL: its
// Claude provider keeps a warm spare (parked in a folder of its own) and, in mode "crash", a session
// whose private system-prompt append goes to claude as a file holds a turn. Mode "start" only starts
// a runtime and shuts it down. Settings come in TETHER_TEST_HOST as JSON; progress goes to stdout.
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';

const settings = JSON.parse(process.env.TETHER_TEST_HOST ?? '{}');
const runtime = await createAgentRuntime({
  providers: [
    createClaudeProvider({
      claudePath: settings.claudePath,
      environment: settings.environment,
      warmPool: { spares: 1 },
    }),
  ],
});
if (settings.mode === 'start') {
  await runtime.shutdown();
  process.stdout.write('started\n');
} else {
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: settings.workspace },
    appendSystemPrompt: 'Private instructions.',
  });
  await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hold on.' }] });
  process.stdout.write('turn submitted\n');
}
