import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollFor, readProcessCommandLine, readProcessStatus } from '@tether/provider-claude/test-support';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

// What a SIGKILLed host leaves in the temporary folder (a session's private system-prompt append,
// the warm spares' parking folder, a stdout pair's or a model list's folder) is removed by the next host that starts; a running host's is kept.

const hostScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'leftovers-host.mjs');
let environment: ClaudeTestEnvironment | undefined;

afterEach(async () => {
  await environment?.killProcessesLeft();
  await environment?.cleanup();
  environment = undefined;
});

/** Runs leftovers-host.mjs in `mode`; resolves with the host once it printed `line`. */
async function host(
  testEnvironment: ClaudeTestEnvironment,
  mode: 'crash' | 'start',
  line: string,
  claudePath = testEnvironment.claudePath,
) {
  const child = spawn(process.execPath, [hostScript], {
    env: {
      ...testEnvironment.environment,
      TETHER_TEST_HOST: JSON.stringify({
        mode,
        claudePath,
        environment: testEnvironment.environment,
        workspace: testEnvironment.workspace,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes(`${line}\n`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`The host exited (${code}) before "${line}": ${output}`)));
  });
  return child;
}

/** The names in the hosts' temporary folder (their TMPDIR) that start with `prefix`. */
function temporaryFolders(testEnvironment: ClaudeTestEnvironment, prefix: string): string[] {
  return readdirSync(testEnvironment.environment.TMPDIR!).filter((name) => name.startsWith(prefix));
}

describe.runIf(process.platform === 'linux')('after a host was SIGKILLed', () => {
  it('the next host to start removes the private prompt folder, the parking folder, a stdout pair’s and a model list’s folder it left; a live host’s folder is kept', async () => {
    environment = await createClaudeTestEnvironment();
    // The prompt file lives until its claude's first line of output: a host killed while that claude
    // still starts leaves it. Here that claude stops itself before it starts; the spare starts as usual.
    const stoppingBeforeStart = path.join(environment.home, 'claude-stopping-before-start.sh');
    writeFileSync(
      stoppingBeforeStart,
      `#!/bin/sh\ncase " $* " in *" --append-system-prompt-file="*) kill -STOP $$;; esac\nexec "${environment.claudePath}" "$@"\n`,
    );
    chmodSync(stoppingBeforeStart, 0o755);
    const crashed = await host(environment, 'crash', 'turn submitted', stoppingBeforeStart);
    const testEnvironment = environment;
    const launched = (flag: string, state?: string) =>
      processesWithEnvironment('HOME', testEnvironment.home).find(
        (pid) =>
          readProcessCommandLine(pid)?.some((argument) => argument.startsWith(flag)) &&
          (state === undefined || readProcessStatus(pid)?.state === state),
      );
    // The session's claude holds its prompt file (stopped before it read it), and the spare is parked: both folders exist.
    await pollFor(() => launched('--append-system-prompt-file=', 'T'));
    await pollFor(() => launched('--await-claim'));
    const leftovers = [
      ...temporaryFolders(environment, 'tether-prompt-'),
      ...temporaryFolders(environment, 'tether-spares-'),
    ];
    // One prompt folder per claude that got the append (the session's, and a spare started for its configuration).
    expect(temporaryFolders(environment, 'tether-prompt-')).not.toEqual([]);
    expect(temporaryFolders(environment, 'tether-spares-')).toHaveLength(1);
    const crashedStart = readProcessStatus(crashed.pid!)!.startTime;
    crashed.kill('SIGKILL');
    await new Promise((resolve) => crashed.once('close', resolve));
    // Its agents outlive it (the next runtime's doRecover ends them when a store recorded them): not this test's subject.
    await environment.killProcessesLeft();
    expect([
      ...temporaryFolders(environment, 'tether-prompt-'),
      ...temporaryFolders(environment, 'tether-spares-'),
    ]).toEqual(leftovers);
    // This test's own process is alive: a folder named for it belongs to a host that still runs.
    const namespace = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))?.[0];
    const live = `tether-spares-${namespace}-${process.pid}-${readProcessStatus(process.pid)!.startTime}-Live12`;
    mkdirSync(path.join(environment.environment.TMPDIR!, live));
    // What a host killed in the milliseconds its stdout pair connects, or while it reads the model list,
    // leaves (windows too brief or too rare to hit here): folders named as it names them.
    for (const prefix of ['tether-stdout-', 'tether-models-'])
      mkdirSync(
        path.join(environment.environment.TMPDIR!, `${prefix}${namespace}-${crashed.pid}-${crashedStart}-Left12`),
      );

    const next = await host(environment, 'start', 'started');
    await new Promise((resolve) => (next.exitCode === null ? next.once('exit', resolve) : resolve(null)));
    expect([
      ...temporaryFolders(environment, 'tether-prompt-'),
      ...temporaryFolders(environment, 'tether-spares-'),
      ...temporaryFolders(environment, 'tether-stdout-'),
      ...temporaryFolders(environment, 'tether-models-'),
    ]).toEqual([live]);
  });
});
