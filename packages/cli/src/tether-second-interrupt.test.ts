import { openSqliteStore } from '@tether/store-sqlite';
import {
  fakeClaudeCliPath,
  fakeCliControls,
  fakeCliResult,
  fakeCliScript,
  fakeCliTurn,
  processesWithEnvironment,
} from '@tether/testkit';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-second-interrupt-');

describe('tether run and a double Ctrl-C', () => {
  it('a second Ctrl-C that comes once the first has stopped the run, while tether closes down, still closes the session', async () => {
    // A CLI that stops its turn when asked, then neither reads nor exits: releasing it at the end
    // takes seconds, which holds open what is only a few hundred milliseconds with the real one.
    const environment = {
      ...fixture.environment,
      TETHER_CLAUDE_PATH: fakeClaudeCliPath(),
      ...fakeCliScript([fakeCliTurn('working').slice(0, 3)]),
      ...fakeCliControls({
        interrupt: {
          response: { still_queued: [] },
          // biome-ignore lint/suspicious/noThenProperty: the fake CLI's step key (what follows its answer), never awaited
          then: [
            fakeCliResult({ subtype: 'error_during_execution', is_error: true, errors: ['[ede_diagnostic] aborted'] }),
            { hang: true },
          ],
        },
      }),
    };
    let interrupts = 0;
    const { child, finished } = spawnTether(['run', '--json', 'Take your time'], {
      cwd: fixture.workspace,
      environment,
      onStdoutLine: (line) => {
        const event = JSON.parse(line) as { type: string };
        // The first on the first text; the second once that run has completed, as a person tapping
        // Ctrl-C twice lands it when the stop was quick: tether is then shutting its runtime down.
        const second = event.type === 'run.completed' && interrupts === 1;
        if ((event.type === 'run.message_delta' && interrupts === 0) || second) {
          interrupts += 1;
          child.kill('SIGINT');
        }
      },
    });
    const result = await finished;
    expect(interrupts).toBe(2);
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('closing the session');
    expect(processesWithEnvironment('HOME', fixture.environment.HOME!)).toEqual([]);
    const store = await openSqliteStore({ dataDir: fixture.environment.TETHER_HOME! });
    try {
      const [session] = await store.loadSessions();
      expect(session?.state).toBe('closed');
      expect((await store.listRuns(session!.sessionId)).map((run) => run.outcome)).toEqual(['interrupted']);
    } finally {
      await store.close();
    }
  });
});

describe('a signal after a command stopped listening', () => {
  it("lets its closing steps finish, then ends the process with the signal's code (not killed by it)", async () => {
    // What a command does as it ends: its signal listener goes, then it closes what it drove.
    const script = `
      const { processContext } = await import(process.env.CLI_ENTRY);
      const context = processContext();
      context.onInterrupt(() => {})();
      // Waits for the signal to be handled (the last resort notes its code for the exit), not a while:
      // a listener of the test's own would take Node's default away, so it watches for that note.
      const exitListeners = process.listenerCount('exit');
      process.kill(process.pid, 'SIGINT');
      while (process.listenerCount('exit') === exitListeners) await new Promise((resolve) => setImmediate(resolve));
      process.stdout.write('closing steps done');
    `;
    // The built CLI, as bin/tether.js runs it.
    const entry = pathToFileURL(path.resolve(import.meta.dirname, '../dist/bundle/index.js')).href;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fixture.root,
      env: { PATH: process.env['PATH'] ?? '', CLI_ENTRY: entry },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.once('close', (exitCode, exitSignal) => resolve([exitCode, exitSignal])),
    );
    expect({ code, signal, stderr }).toEqual({ code: 130, signal: null, stderr: '' });
    expect(stdout).toBe('closing steps done');
  });
});
