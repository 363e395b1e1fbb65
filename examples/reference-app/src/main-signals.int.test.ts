import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { holdReply } from '@tether/fake-anthropic-api';
import { openSqliteStore } from '@tether/store-sqlite';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

/** The built program, run as a user runs it (`./dev npm run build` first). */
const mainPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/main.js');

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  // Fails if any process carrying the test's HOME (the program, claude, what claude started) is left.
  await environment?.cleanup();
});

describe('the reference app stopped by a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)('%s while the turn streams: the run is recorded ended before it exits %i', async (signal, exitCode) => {
    environment = await createClaudeTestEnvironment();
    // The model starts its answer and says nothing more: the turn streams until the signal.
    environment.api.enqueue(holdReply());
    const dataDir = path.join(environment.home, 'tether-data');
    const child = spawn(process.execPath, [mainPath, environment.workspace, 'Tell me a long story'], {
      cwd: environment.workspace,
      // Exactly what claude needs against the fake API, the pinned binary, and the data dir: nothing inherited.
      env: { ...environment.environment, TETHER_HOME: dataDir, TETHER_CLAUDE_PATH: environment.claudePath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;

    await environment.api.waitForRequests(1, { kind: 'turn' });
    child.kill(signal);
    const [code, killedBy] = await exited;

    expect({ code, killedBy }, stderr).toEqual({ code: exitCode, killedBy: null });
    expect(stdout.split('\n').filter((line) => line.startsWith('run '))).toEqual([
      expect.stringMatching(/^run stopped: tether is shutting down/),
    ]);
    const runId = /turn accepted as run (run_\S+)/.exec(stdout)?.[1];
    expect(runId, stdout).toBeDefined();
    // Read straight from the store, no runtime started: a runtime's start would end a run left open and hide the defect.
    const store = await openSqliteStore({ dataDir });
    try {
      expect(await store.getRun(runId!)).toMatchObject({ status: 'completed', outcome: 'interrupted' });
    } finally {
      await store.close();
    }
  });
});
