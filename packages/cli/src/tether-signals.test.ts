import { watch } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { type FakeCliStep, fakeClaudeCliPath, fakeCliScript, processesWithEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';
import { storedRuns } from './test-support/stored-records.js';

const fixture = useCommandFixture('tether-signals-');

interface StartedRun {
  readonly pid: number;
  readonly finished: Promise<FinishedTether>;
  /** Resolves with the agent process's TETHER_PROCESS_MARKER once its session.process_started event is out. */
  readonly marker: Promise<string>;
  /** Resolves on the first streamed text delta. */
  readonly streaming: Promise<void>;
}

/** `tether run --json PROMPT ...extra`, watched line by line. */
function startRun(extra: readonly string[], env: Record<string, string> = fixture.environment): StartedRun {
  let markerSeen!: (marker: string) => void;
  let deltaSeen!: () => void;
  const marker = new Promise<string>((resolve) => (markerSeen = resolve));
  const streaming = new Promise<void>((resolve) => (deltaSeen = resolve));
  const { child, finished } = spawnTether(['run', '--json', ...extra, 'Tell me a long story'], {
    cwd: path.join(fixture.root, 'workspace'),
    environment: env,
    onStdoutLine: (line) => {
      const event = JSON.parse(line) as { type: string; marker?: string };
      if (event.type === 'session.process_started') markerSeen(event.marker!);
      if (event.type === 'run.message_delta') deltaSeen();
    },
  });
  return { pid: child.pid!, finished, marker, streaming };
}

function events(stdout: string): { type: string; sessionId: string; runId?: string; outcome?: string }[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; sessionId: string; runId?: string; outcome?: string });
}

/** Every live process started for this test: each carries the test's HOME (and each agent its marker). */
function leftovers(marker: string): number[] {
  return [
    ...new Set([
      ...processesWithEnvironment('TETHER_PROCESS_MARKER', marker),
      ...processesWithEnvironment('HOME', fixture.environment.HOME!),
    ]),
  ];
}

const midTurnCases = [
  ['SIGTERM', 'cli', 143],
  ['SIGHUP', 'cli', 129],
  ['SIGQUIT', 'cli', 131],
  // nodemon's restart, and an alarm: left to Node's default, each ended tether with its run open.
  ['SIGUSR2', 'cli', 140],
  ['SIGALRM', 'cli', 142],
  ['SIGTERM', 'sdk', 143],
] as const;

describe('tether run and terminating signals', () => {
  it.each(midTurnCases)(
    '%s mid-turn (transport %s): the run ends interrupted, no process is left, the data dir is released, exit %i',
    async (signal, transport, code) => {
      fixture.api.enqueue(
        textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }),
        textReply('Resumed fine.'),
      );
      const run = startRun(['--transport', transport]);
      const marker = await run.marker;
      await run.streaming;
      const signalledAt = performance.now();
      process.kill(run.pid, signal);
      const result = await run.finished;
      console.info(
        `${signal} mid-turn (${transport}): ${Math.round(result.exitedAt - signalledAt)} ms from the signal to exit`,
      );
      expect(result.code, result.stderr).toBe(code);
      expect(leftovers(marker)).toEqual([]);
      const printed = events(result.stdout);
      expect(printed.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
      const sessionId = printed[0]!.sessionId;
      expect(await storedRuns(fixture.environment.TETHER_HOME!, sessionId)).toEqual([
        { status: 'completed', outcome: 'interrupted' },
      ]);
      const resumed = spawnTether(['run', '--transport', transport, '--resume', sessionId, 'Again'], {
        cwd: path.join(fixture.root, 'workspace'),
        environment: fixture.environment,
      });
      const again = await resumed.finished;
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe('Resumed fine.\n');
    },
  );

  it('SIGTERM while the agent is still starting (it never writes a frame and ignores SIGTERM): nothing left, exit 143', async () => {
    const wedged: FakeCliStep[] = [{ ignore: 'SIGTERM' }, { hang: true }];
    const env = { ...fixture.environment, TETHER_CLAUDE_PATH: fakeClaudeCliPath(), ...fakeCliScript([wedged]) };
    const run = startRun([], env);
    const marker = await run.marker;
    const signalledAt = performance.now();
    process.kill(run.pid, 'SIGTERM');
    const result = await run.finished;
    console.info(`SIGTERM during start-up: ${Math.round(result.exitedAt - signalledAt)} ms from the signal to exit`);
    expect(result.code, result.stderr).toBe(143);
    expect(leftovers(marker)).toEqual([]);
    const printed = events(result.stdout);
    expect(printed.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    expect(await storedRuns(fixture.environment.TETHER_HOME!, printed[0]!.sessionId)).toEqual([
      { status: 'completed', outcome: 'interrupted' },
    ]);
  });

  it('Ctrl-C while the agent is wedged in start-up (it never answers the stop): the run is ended after a short wait, nothing left, exit 130', async () => {
    const wedged: FakeCliStep[] = [{ ignore: 'SIGTERM' }, { hang: true }];
    const env = { ...fixture.environment, TETHER_CLAUDE_PATH: fakeClaudeCliPath(), ...fakeCliScript([wedged]) };
    const run = startRun([], env);
    const marker = await run.marker;
    const signalledAt = performance.now();
    process.kill(run.pid, 'SIGINT');
    const result = await run.finished;
    console.info(
      `Ctrl-C during a wedged start-up: ${Math.round(result.exitedAt - signalledAt)} ms from the signal to exit`,
    );
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('did not stop in time');
    expect(leftovers(marker)).toEqual([]);
    const printed = events(result.stdout);
    expect(printed.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    expect(await storedRuns(fixture.environment.TETHER_HOME!, printed[0]!.sessionId)).toEqual([
      { status: 'completed', outcome: 'interrupted' },
    ]);
  });

  it('a second signal stops everything at once, without waiting for the run to settle', async () => {
    const wedged: FakeCliStep[] = [
      { line: { type: 'system', subtype: 'init', session_id: '$SESSION' } },
      { ignore: 'SIGTERM' },
      { hang: true },
    ];
    const env = { ...fixture.environment, TETHER_CLAUDE_PATH: fakeClaudeCliPath(), ...fakeCliScript([wedged]) };
    let stopping!: () => void;
    const stopAnnounced = new Promise<void>((resolve) => (stopping = resolve));
    let markerSeen!: (marker: string) => void;
    const marker = new Promise<string>((resolve) => (markerSeen = resolve));
    const { child, finished } = spawnTether(['run', '--json', 'Hang, please'], {
      cwd: path.join(fixture.root, 'workspace'),
      environment: env,
      onStdoutLine: (line) => {
        const event = JSON.parse(line) as { type: string; marker?: string };
        if (event.type === 'session.process_started') markerSeen(event.marker!);
      },
      onStderr: (text) => {
        if (text.includes('stopping the run')) stopping();
      },
    });
    const agentMarker = await marker;
    process.kill(child.pid!, 'SIGTERM');
    await stopAnnounced;
    const secondAt = performance.now();
    process.kill(child.pid!, 'SIGINT');
    const result = await finished;
    console.info(`second signal: ${Math.round(result.exitedAt - secondAt)} ms from the second signal to exit`);
    expect(result.code, result.stderr).toBe(143);
    expect(result.stderr).toContain('stopping now');
    expect(leftovers(agentMarker)).toEqual([]);
    expect(events(result.stdout).at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
  });
});

/** `tether serve` on a free port; resolves once it listens, with a stop that waits for its exit. */
async function serve(): Promise<{ stop: () => Promise<number | null> }> {
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  let stderr = '';
  const daemon = spawnTether(['serve', '--port', '0', '--no-web'], {
    cwd: fixture.root,
    environment: fixture.environment,
    onStderr: (text) => {
      stderr += text;
      if (stderr.includes('listening on')) listening();
    },
  });
  await Promise.race([
    ready,
    daemon.finished.then((result) =>
      Promise.reject(new Error(`tether serve exited (${result.code}): ${result.stderr}`)),
    ),
  ]);
  return {
    stop: async () => {
      daemon.child.kill('SIGTERM');
      return (await daemon.finished).code;
    },
  };
}

describe('terminating signals through a daemon, and for demo and attach', () => {
  it("SIGTERM to a tether run going through the daemon stops the daemon's run, then exits 143; the daemon keeps the session", async () => {
    const daemon = await serve();
    try {
      fixture.api.enqueue(
        textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }),
        textReply('Still here.'),
      );
      const run = startRun([]);
      await run.streaming;
      const signalledAt = performance.now();
      process.kill(run.pid, 'SIGTERM');
      const result = await run.finished;
      console.info(
        `SIGTERM through the daemon: ${Math.round(result.exitedAt - signalledAt)} ms from the signal to exit`,
      );
      expect(result.code, result.stderr).toBe(143);
      const sessionId = events(result.stdout)[0]!.sessionId;
      const shown = await spawnTether(['show', sessionId, '--json'], {
        cwd: fixture.root,
        environment: fixture.environment,
      }).finished;
      expect(JSON.parse(shown.stdout)).toMatchObject({ state: 'idle', lastRun: { outcome: 'interrupted' } });
      const sent = await spawnTether(['send', sessionId, 'Are you there?'], {
        cwd: fixture.root,
        environment: fixture.environment,
      }).finished;
      expect(sent.code, sent.stderr).toBe(0);
      expect(sent.stdout).toBe('Still here.\n');
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('SIGHUP detaches tether attach with exit 129', async () => {
    const daemon = await serve();
    try {
      fixture.api.enqueue(textReply('Hello.'));
      const first = await spawnTether(['run', 'Hi'], {
        cwd: path.join(fixture.root, 'workspace'),
        environment: fixture.environment,
      }).finished;
      const sessionId = /session (ses_[0-9a-f]{32})/.exec(first.stderr)![1]!;
      let attached!: () => void;
      const isAttached = new Promise<void>((resolve) => (attached = resolve));
      const attach = spawnTether(['attach', sessionId], {
        cwd: fixture.root,
        environment: fixture.environment,
        onStderr: (text) => text.includes('attached to') && attached(),
      });
      await isAttached;
      attach.child.kill('SIGHUP');
      expect((await attach.finished).code).toBe(129);
    } finally {
      expect(await daemon.stop()).toBe(0);
    }
  });

  it('SIGTERM to tether demo as it starts: what it made is removed, exit 143', async () => {
    const temporary = await mkdtemp(path.join(os.tmpdir(), 'tether-demo-signal-'));
    try {
      const made = new Promise<void>((resolve) => {
        const watcher = watch(temporary, () => {
          watcher.close();
          resolve();
        });
      });
      const demo = spawnTether(['demo'], {
        cwd: fixture.root,
        environment: { ...fixture.environment, TMPDIR: temporary },
      });
      await made;
      demo.child.kill('SIGTERM');
      const result = await demo.finished;
      expect(result.code, result.stderr).toBe(143);
      expect(await readdir(temporary)).toEqual([]);
    } finally {
      await rm(temporary, { recursive: true, force: true });
    }
  });

  it('SIGTERM to tether demo: the agent is stopped, nothing is left, exit 143', async () => {
    const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...withoutCredentials } = fixture.environment;
    let markerSeen!: (marker: string) => void;
    const agentStarted = new Promise<string>((resolve) => (markerSeen = resolve));
    const demo = spawnTether(['demo', '--json'], {
      cwd: fixture.root,
      environment: withoutCredentials,
      onStdoutLine: (line) => {
        const event = JSON.parse(line) as { type: string; marker?: string };
        if (event.type === 'session.process_started') markerSeen(event.marker!);
      },
    });
    const marker = await agentStarted;
    demo.child.kill('SIGTERM');
    const result = await demo.finished;
    expect(result.code, result.stderr).toBe(143);
    expect(processesWithEnvironment('TETHER_PROCESS_MARKER', marker)).toEqual([]);
  });

  it('Ctrl-C during the demo: it says the demo stopped and its session is gone, never to go on with it; exit 130', async () => {
    const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...withoutCredentials } = fixture.environment;
    let toolCalled!: () => void;
    const midTurn = new Promise<void>((resolve) => (toolCalled = resolve));
    let progress = '';
    const demo = spawnTether(['demo'], {
      cwd: fixture.root,
      environment: withoutCredentials,
      onStderr: (text) => {
        progress += text;
        if (progress.includes('Read invoked')) toolCalled();
      },
    });
    await midTurn;
    demo.child.kill('SIGINT');
    const result = await demo.finished;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('■ interrupted');
    expect(result.stderr).not.toContain('runtime_stopped');
    expect(result.stderr.endsWith('\nDemo stopped (SIGINT); everything it made is removed.\n'), result.stderr).toBe(
      true,
    );
  });
});
