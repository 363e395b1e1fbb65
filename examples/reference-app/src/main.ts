import path from 'node:path';
import { runReferenceApp } from './reference-app.js';

// Usage: node dist/main.js [workspace] "prompt"   (uses $TETHER_HOME, ANTHROPIC_API_KEY or your claude login)
const [workspaceArgument, promptArgument] = process.argv.slice(2);
const prompt = promptArgument ?? workspaceArgument ?? 'Summarise this repository in two sentences.';
const workspace = path.resolve(promptArgument === undefined ? '.' : (workspaceArgument ?? '.'));

const result = await runReferenceApp({ workspace, prompt });
process.exitCode = result.run.outcome === 'succeeded' ? 0 : 1;
