import path from 'node:path';
import { handleShutdownSignals } from '@tether/runtime';
import { createReferenceRuntime, runReferenceApp } from './reference-app.js';

// Usage: node dist/main.js [workspace] "prompt"   (uses $TETHER_HOME, ANTHROPIC_API_KEY or your claude login)
const [workspaceArgument, promptArgument] = process.argv.slice(2);
const prompt = promptArgument ?? workspaceArgument ?? 'Summarise this repository in two sentences.';
const workspace = path.resolve(promptArgument === undefined ? '.' : (workspaceArgument ?? '.'));

const runtime = await createReferenceRuntime();
// Left to Node's default, Ctrl-C or a SIGTERM would end this process at once: the run would stay open
// in the store until the next start, and claude could outlive it (it did on SIGTERM). Handled, a signal shuts the
// runtime down (the run recorded interrupted, the agent's processes killed, the store closed) and
// only then exits, with 128 + the signal's number (130 for Ctrl-C).
handleShutdownSignals(runtime);
try {
  const result = await runReferenceApp({ workspace, prompt, runtime });
  process.exitCode = result.run.outcome === 'succeeded' ? 0 : 1;
} finally {
  // After a signal this waits for the shutdown it began, whose handler then exits with the signal's code.
  await runtime.shutdown();
}
