import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ProtocolEvent } from '@tether/protocol';
import { openPostgresStore } from '@tether/store-postgres';
import { type ClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { readProcessCommandLine } from '@tether/provider-claude/test-support';
import { type Client, client, openEventStream, sseFrames } from '../daemon/daemon-test-helpers.js';

const tetherBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/cli/bin/tether.js');

/** Names the daemon a process belongs to: `tether serve` passes its environment on to claude and its tools. */
const daemonMarker = 'TETHER_SCALE_OUT_DAEMON';

/** A `tether serve` of a test, on a data dir of its own. */
export interface ServedDaemon {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: string;
  readonly token: string;
  readonly api: Client;
  /** Everything it wrote so far (its JSON log on stdout, its messages on stderr). */
  output(): string;
  /** The claude processes this daemon started that are still alive. */
  claudeProcesses(): number[];
}

/**
 * `tether serve --port 0 --no-web --data-dir <root>/<name> --store DATABASE ARGS`, as a user would
 * start it, once it listens (database null: no --store, the data dir's SQLite). Every daemon of a
 * test gets the test environment's HOME: claude keeps its conversations under ~/.claude, and a
 * session taken over by another daemon resumes there only if that daemon's claude reads the same
 * directory (docs/store-postgres.md: the storage every daemon must share). The data dirs differ: each holds its daemon's token, lock and owner id.
 */
export function serveDaemon(
  environment: ClaudeTestEnvironment,
  name: string,
  database: string | null,
  args: readonly string[] = [],
): Promise<ServedDaemon> {
  const dataDir = path.join(path.dirname(environment.home), `daemon-${name}`);
  const child = spawn(
    process.execPath,
    [
      tetherBin,
      'serve',
      '--port',
      '0',
      '--no-web',
      '--data-dir',
      dataDir,
      ...(database === null ? [] : ['--store', database]),
      ...args,
    ],
    {
      cwd: environment.workspace,
      env: { ...environment.environment, TETHER_CLAUDE_PATH: environment.claudePath, [daemonMarker]: dataDir },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    let listening = false;
    child.stdout!.setEncoding('utf8');
    child.stderr!.setEncoding('utf8');
    const collect = (chunk: string) => {
      output += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (!match || listening) return;
      listening = true;
      const url = match[1]!;
      readFile(path.join(dataDir, 'daemon-token'), 'utf8').then((token) => {
        const daemon = { url, token: token.trim() };
        resolve({
          name,
          child,
          ...daemon,
          api: client(daemon),
          output: () => output,
          claudeProcesses: () =>
            processesWithEnvironment(daemonMarker, dataDir).filter(
              (pid) => readProcessCommandLine(pid)?.[0] === environment.claudePath,
            ),
        });
      }, reject);
    };
    child.stdout!.on('data', collect);
    child.stderr!.on('data', collect);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (!listening) reject(new Error(`tether serve ${name} exited (${code ?? signal}): ${output}`));
    });
  });
}

/**
 * What a test leaves, ended (for its afterEach): its followers closed, its daemons stopped, whatever
 * a daemon killed there left running (its claude carries the test's HOME) killed, its environment removed.
 */
export async function endTestDaemons(
  environment: ClaudeTestEnvironment | undefined,
  daemons: ServedDaemon[],
  followers: EventFollower[],
): Promise<void> {
  for (const follower of followers.splice(0)) follower.close();
  await Promise.all(daemons.splice(0).map((daemon) => stopDaemon(daemon)));
  await environment?.killProcessesLeft();
  await environment?.cleanup();
}

/** Sends `signal` to a daemon still running (continuing it first, should it be stopped) and waits for its exit. */
export async function stopDaemon(daemon: ServedDaemon, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  const { child } = daemon;
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  child.kill('SIGCONT');
  child.kill(signal);
  return closed;
}

/**
 * A session's events as a client of one daemon sees them on `GET /v1/sessions/:id/events`, recorded
 * as they arrive (each frame's id checked against its event's seq), for a test to wait on.
 */
export class EventFollower {
  readonly events: ProtocolEvent[] = [];
  private readonly abort = new AbortController();
  private waiters: Array<() => void> = [];
  private ended: string | null = null;

  readonly daemon: ServedDaemon;

  private constructor(daemon: ServedDaemon) {
    this.daemon = daemon;
  }

  static async open(daemon: ServedDaemon, sessionId: string, afterSeq = 0): Promise<EventFollower> {
    const follower = new EventFollower(daemon);
    const response = await openEventStream(daemon, sessionId, { after: afterSeq, signal: follower.abort.signal });
    if (response.status !== 200) throw new Error(`events of ${sessionId} at ${daemon.name}: ${response.status}`);
    void follower.read(response.body!);
    return follower;
  }

  /** The first recorded event (from index `from`) that matches, once it arrives; rejects after timeoutMs. */
  async waitFor(
    match: (event: ProtocolEvent) => boolean,
    what: string,
    options: { timeoutMs?: number; from?: number } = {},
  ): Promise<ProtocolEvent> {
    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    for (;;) {
      const found = this.events.slice(options.from ?? 0).find(match);
      if (found) return found;
      if (this.ended !== null) throw new Error(`${this.daemon.name}'s stream ended (${this.ended}) before ${what}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `no ${what} on ${this.daemon.name}'s stream within ${options.timeoutMs ?? 20_000} ms; it delivered: ${this.events
            .map((event) => `${event.seq}:${event.type}`)
            .join(' ')}; ${this.daemon.name}'s output ends: ${this.daemon.output().slice(-3000)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const frame of sseFrames(body)) {
        if (frame.event !== undefined) {
          this.ended = `event: ${frame.event} ${frame.data ?? ''}`;
          break;
        }
        if (frame.data === undefined) continue;
        const event = JSON.parse(frame.data) as ProtocolEvent;
        if (frame.id !== String(event.seq)) throw new Error(`frame id ${frame.id} is not the event's seq ${event.seq}`);
        this.events.push(event);
        this.wake();
      }
      this.ended ??= 'closed by the daemon';
    } catch (error) {
      this.ended = this.abort.signal.aborted ? 'closed by the test' : String(error);
    }
    this.wake();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** Every event the daemon's store holds for the session, through its events stream from the start. */
export async function replayThrough(
  daemon: ServedDaemon,
  sessionId: string,
  lastSeq: number,
): Promise<ProtocolEvent[]> {
  const follower = await EventFollower.open(daemon, sessionId);
  try {
    await follower.waitFor((event) => event.seq >= lastSeq, `seq ${lastSeq}`);
    return follower.events;
  } finally {
    follower.close();
  }
}

/** The session's log read straight from the database, by a store of its own (no daemon in between). */
export async function replayFromDatabase(database: string, sessionId: string): Promise<ProtocolEvent[]> {
  const store = await openPostgresStore({ url: database, maxConnections: 1 });
  try {
    return await store.readEvents(sessionId, { afterSeq: 0, limit: 100_000 });
  } finally {
    await store.close();
  }
}

export const seqs = (events: readonly ProtocolEvent[]): number[] => events.map((event) => event.seq);

/** 1, 2, … n: what a log with no gap and no duplicate numbers. */
export const oneTo = (last: number): number[] => Array.from({ length: last }, (_, index) => index + 1);

export const text = (value: string) => [{ type: 'text' as const, text: value }];

export function runCompleted(runId: string) {
  return (event: ProtocolEvent): event is Extract<ProtocolEvent, { type: 'run.completed' }> =>
    event.type === 'run.completed' && event.runId === runId;
}

export function isDelta(runId: string) {
  return (event: ProtocolEvent): event is Extract<ProtocolEvent, { type: 'run.message_delta' }> =>
    event.type === 'run.message_delta' && event.runId === runId;
}

/** The text the run's deltas carry, joined. */
export function replyText(events: readonly ProtocolEvent[], runId: string): string {
  return events
    .filter(isDelta(runId))
    .map((event) => event.text)
    .join('');
}
