import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { processesWithEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, sessionIdFrom, spawnTether } from './test-support/spawn-tether.js';
import { storedRuns } from './test-support/stored-records.js';

const fixture = useCommandFixture('tether-output-closed-');
const daemon = useTetherServe(fixture);

/** What Node prints for an unhandled 'error' event (or any uncaught exception): the crash this file is about. */
const crash = /EPIPE|Unhandled 'error' event|\n\s+at /;

/** A turn that streams for about 10 s unless stopped: its output outlives any reader that goes away early. */
function longStory(): void {
  fixture.api.enqueue(textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }));
}

/** Every live process started for this test (tether itself, every agent): each carries the test's HOME. */
function leftovers(): number[] {
  return processesWithEnvironment('HOME', fixture.environment.HOME!);
}

/**
 * `tether ARGS` whose stdout reader goes away (as `| head` does): the test's end of the pipe is
 * destroyed once `readEnough` says so of a line, or without it at the first bytes (`| head -c`: a
 * streamed answer has no newline until it ends), so tether's next write fails with EPIPE.
 */
function readThenClose(
  args: readonly string[],
  options: { readEnough?: (line: string) => boolean; onStderr?: (text: string) => void } = {},
): { finished: Promise<FinishedTether>; closedAt: Promise<number> } {
  let closed!: (at: number) => void;
  const closedAt = new Promise<number>((resolve) => (closed = resolve));
  const close = () => {
    if (child.stdout!.destroyed) return;
    child.stdout!.destroy();
    closed(performance.now());
  };
  const { readEnough } = options;
  const { child, finished } = spawnTether(args, {
    cwd: fixture.workspace,
    environment: fixture.environment,
    onStdoutLine: (line) => readEnough?.(line) && close(),
    ...(options.onStderr ? { onStderr: options.onStderr } : {}),
  });
  if (!readEnough) child.stdout!.once('data', close);
  return { finished, closedAt };
}

describe('tether serve whose log reader goes away (tether serve | head -1)', () => {
  it('stops as on SIGHUP at its next log line, with no stack trace', async () => {
    const dataDir = path.join(fixture.root, 'serve-closed');
    let listening!: (url: string) => void;
    const url = new Promise<string>((resolve) => (listening = resolve));
    const serve = readThenClose(['serve', '--port', '0', '--no-web', '--data-dir', dataDir], {
      readEnough: () => true,
      onStderr: (text) => {
        const found = /listening on (http:\/\/\S+)/.exec(text);
        if (found) listening(found[1]!);
      },
    });
    const [address] = await Promise.all([url, serve.closedAt]);
    const token = (await readFile(path.join(dataDir, 'daemon-token'), 'utf8')).trim();
    // A request with the token is logged: that line finds nobody reading.
    await fetch(`${address}/v1/sessions`, { headers: { authorization: `Bearer ${token}` } });
    const result = await serve.finished;
    expect(result.stderr).not.toMatch(crash);
    expect(result.stderr).toContain('stdout closed');
    expect(leftovers()).toEqual([]);
  });
});

describe('a command driving a run whose stdout reader goes away ends it as on SIGHUP', () => {
  it('tether run --json (in-process): the run is recorded interrupted, no agent is left, no stack trace, exit 129', async () => {
    longStory();
    let sessionId: string | undefined;
    const run = readThenClose(['run', '--json', 'Tell me a long story'], {
      readEnough: (line) => {
        const event = JSON.parse(line) as { type: string; sessionId: string };
        sessionId ??= event.sessionId;
        return event.type === 'run.message_delta';
      },
    });
    const closedAt = await run.closedAt;
    const result = await run.finished;
    console.info(`stdout closed mid-turn (--json): ${Math.round(result.exitedAt - closedAt)} ms to exit`);
    expect(result.code, result.stderr).toBe(129);
    expect(result.stderr).not.toMatch(crash);
    expect(result.stderr).toContain('stdout closed');
    expect(leftovers()).toEqual([]);
    expect(await storedRuns(fixture.environment.TETHER_HOME!, sessionId!)).toEqual([
      { status: 'completed', outcome: 'interrupted' },
    ]);
  });

  it('tether run (human mode, the answer cut after its first bytes as by head -c): the same ending', async () => {
    longStory();
    const run = readThenClose(['run', 'Tell me a long story']);
    const closedAt = await run.closedAt;
    const result = await run.finished;
    console.info(`stdout closed mid-turn (human): ${Math.round(result.exitedAt - closedAt)} ms to exit`);
    expect(result.code, result.stderr).toBe(129);
    expect(result.stderr).not.toMatch(crash);
    expect(result.stderr).toMatch(/■ interrupted/);
    expect(leftovers()).toEqual([]);
    expect(await storedRuns(fixture.environment.TETHER_HOME!, sessionIdFrom(result.stderr))).toEqual([
      { status: 'completed', outcome: 'interrupted' },
    ]);
  });

  it("through the daemon: tether attach detaches, tether send interrupts the daemon's run, both exit 129; the session stays", async () => {
    await daemon.serve(['--no-web']);
    fixture.api.enqueue(textReply('Hello.'));
    const first = await spawnTether(['run', 'Hi'], { cwd: fixture.workspace, environment: fixture.environment })
      .finished;
    expect(first.code, first.stderr).toBe(0);
    const sessionId = sessionIdFrom(first.stderr);
    let isAttached!: () => void;
    const attachedNow = new Promise<void>((resolve) => (isAttached = resolve));
    const attach = readThenClose(['attach', sessionId], {
      onStderr: (text) => text.includes('attached to') && isAttached(),
    });
    await attachedNow;
    let attachGone = false;
    void attach.closedAt.then(() => (attachGone = true));
    longStory();
    // The run goes on (one delta every 50 ms) until send stops it: attach is sure to write after its reader left.
    const send = readThenClose(['send', sessionId, '--json', 'Tell me a long story'], {
      readEnough: (line) => attachGone && (JSON.parse(line) as { type: string }).type === 'run.message_delta',
    });
    const [attached, sent] = await Promise.all([attach.finished, send.finished]);
    expect(attached.code, attached.stderr).toBe(129);
    expect(attached.stderr).not.toMatch(crash);
    expect(sent.code, sent.stderr).toBe(129);
    expect(sent.stderr).not.toMatch(crash);
    const shown = await spawnTether(['show', sessionId, '--json'], {
      cwd: fixture.workspace,
      environment: fixture.environment,
    }).finished;
    expect(JSON.parse(shown.stdout)).toMatchObject({ state: 'idle', lastRun: { outcome: 'interrupted' } });
  });
});

describe('a command that only prints, to a reader already gone', () => {
  it.each([[['sessions', '--json']], [['--help']]])('tether %j stops writing and exits 0, silently', async (args) => {
    const { child, finished } = spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment });
    // Gone before the first write: that write fails with EPIPE every time, not only when the reader is quick.
    child.stdout!.destroy();
    const result = await finished;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe('');
  });
});

describe('a data dir that is a file', () => {
  it('doctor shows the failed data dir row with its fix, and every other row', async () => {
    const file = path.join(fixture.root, 'not-a-directory');
    await writeFile(file, 'mine\n');
    const result = await spawnTether(['doctor', '--json', '--data-dir', file], {
      cwd: fixture.workspace,
      environment: fixture.environment,
    }).finished;
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    expect(report.ok).toBe(false);
    expect(report.checks.find((check) => check.name === 'data dir')).toEqual({
      name: 'data dir',
      ok: false,
      detail: `${file} is not a directory`,
      fix: expect.stringContaining('--data-dir'),
    });
    expect(report.checks.map((check) => check.name)).toEqual(expect.arrayContaining(['node', 'claude', 'daemon']));
    // Not judged, so not passed either.
    expect(report.checks.find((check) => check.name === 'daemon')).toMatchObject({ ok: true, warning: true });
  });

  it.each([
    ['run --data-dir FILE', (file: string) => ({ args: ['run', '--data-dir', file, 'hi'], env: {} }), '--data-dir'],
    [
      'sessions with TETHER_HOME=FILE/sub',
      (file: string) => ({ args: ['sessions'], env: { TETHER_HOME: path.join(file, 'sub') } }),
      'TETHER_HOME',
    ],
  ])('%s: a one-line usage error, exit 2, nothing touched', async (_name, invocation, from) => {
    const file = path.join(fixture.root, 'not-a-directory');
    await writeFile(file, 'mine\n');
    const { args, env } = invocation(file);
    const result = await spawnTether(args, {
      cwd: fixture.workspace,
      environment: { ...fixture.environment, ...env },
    }).finished;
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^tether \\w+: the data dir \\S+ \\(${from}\\) is not a directory[^\\n]*\\n$`),
    );
    expect(result.stderr).not.toContain('unexpected failure');
    expect(await readFile(file, 'utf8')).toBe('mine\n');
    expect(fixture.api.requests).toEqual([]);
  });
});
