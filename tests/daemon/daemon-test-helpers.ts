import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type Daemon, type DaemonOptions, startDaemon } from '@tether/daemon';
import type { ProtocolEvent, Receipt } from '@tether/protocol';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, onTestFailed } from 'vitest';
import { WebSocket } from 'ws';

export const silentLogger = { level: 'silent' } as const;

export function dataDirOf(environment: ClaudeTestEnvironment): string {
  return path.join(environment.home, 'tether-data');
}

/** A daemon on a free port over the test environment's fake API and the real claude binary. */
export function startTestDaemon(
  environment: ClaudeTestEnvironment,
  options: Partial<DaemonOptions> = {},
): Promise<Daemon> {
  return startDaemon({
    dataDir: dataDirOf(environment),
    port: 0,
    providers: [environment.provider()],
    logger: silentLogger,
    ...options,
  });
}

const daemonChildScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'daemon-child.mjs');

/** A daemon in its own process, run from the built packages (daemon-child.mjs): one a test can SIGKILL or measure. The caller ends it. */
export async function spawnDaemonChild(
  environment: ClaudeTestEnvironment,
): Promise<{ child: ChildProcess; url: string; token: string; pid: number }> {
  const child = spawn(process.execPath, [daemonChildScript], {
    env: {
      ...process.env,
      TETHER_TEST_DAEMON: JSON.stringify({
        dataDir: dataDirOf(environment),
        claudePath: environment.claudePath,
        environment: environment.environment,
      }),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  if (first.done)
    throw new Error(`the daemon child exited before it was listening (exit code ${String(child.exitCode)})`);
  return { child, ...(JSON.parse(first.value as string) as { url: string; token: string; pid: number }) };
}

/** What daemonPerTest gives a test file: everything made through it is cleaned up after each test. */
export interface DaemonFixture {
  /** A fake API, a temp home and workspace, and a daemon on a free port. */
  start(options?: Partial<DaemonOptions>): Promise<{ environment: ClaudeTestEnvironment; daemon: Daemon; api: Client }>;
  /** Only the environment (e.g. for a daemon in a child process). */
  environment(): Promise<ClaudeTestEnvironment>;
  /** A daemon in this process over an environment made by environment(). */
  daemonOn(environment: ClaudeTestEnvironment, options?: Partial<DaemonOptions>): Promise<Daemon>;
}

/** Registers the clean-up of each test (its daemon closed, its environment removed). */
export function daemonPerTest(): DaemonFixture {
  let environment: ClaudeTestEnvironment | undefined;
  let daemon: Daemon | undefined;
  afterEach(async () => {
    // close() is idempotent: a test that closed its daemon already is fine.
    await daemon?.close();
    await environment?.cleanup();
    daemon = undefined;
    environment = undefined;
  });
  const fixture: DaemonFixture = {
    async environment() {
      environment = await createClaudeTestEnvironment();
      return environment;
    },
    async daemonOn(made, options = {}) {
      // The daemon's log is silent unless a test fails: then what it said (e.g. why a stream ended) is printed.
      const logger = options.logger ?? new RecordingLogger();
      if (logger instanceof RecordingLogger)
        onTestFailed(() => {
          console.error(`the daemon's log:\n${logger.lines.map((line) => JSON.stringify(line)).join('\n')}`);
        });
      daemon = await startTestDaemon(made, { ...options, logger });
      return daemon;
    },
    async start(options = {}) {
      const made = await fixture.environment();
      const started = await fixture.daemonOn(made, options);
      return { environment: made, daemon: started, api: client(started) };
    },
  };
  return fixture;
}

/** Matches the run.completed of one run. */
export const completes = (runId: string) => (event: ProtocolEvent) =>
  event.type === 'run.completed' && event.runId === runId;

export interface Client {
  request(
    method: string,
    route: string,
    options?: { body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  command<T extends Receipt = Receipt>(command: Record<string, unknown>): Promise<T>;
}

let commandCounter = 0;
export function commandId(): string {
  commandCounter += 1;
  return `test-${process.pid}-${Date.now()}-${commandCounter}`;
}

export function client(daemon: { url: string; token: string }): Client {
  const request = (method: string, route: string, options: { body?: unknown; headers?: Record<string, string> } = {}) =>
    fetch(`${daemon.url}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${daemon.token}`,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...options.headers,
      },
      ...(options.body === undefined
        ? {}
        : { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) }),
    });
  return {
    request,
    async command<T extends Receipt = Receipt>(command: Record<string, unknown>): Promise<T> {
      const response = await request('POST', '/v1/commands', { body: { commandId: commandId(), ...command } });
      const body = (await response.json()) as T | { error: unknown };
      if (response.status !== 200)
        throw new Error(`command ${String(command['type'])} → ${response.status} ${JSON.stringify(body)}`);
      return body as T;
    },
  };
}

export async function openSession(api: Client, workspace: string): Promise<string> {
  const receipt = await api.command({ type: 'open_session', workspace: { kind: 'directory', path: workspace } });
  return receipt.sessionId;
}

export interface SseFrame {
  readonly id?: string;
  readonly event?: string;
  readonly data?: string;
  readonly comment?: string;
}

/**
 * Parses an SSE body into frames as they arrive (a minimal client: enough to check the framing exactly).
 * The body is locked at once, not at the first read: fetch cancels the body of a Response that was
 * garbage-collected while nobody had started reading it, and a test often opens a stream, drops the
 * Response and sends a command before it reads.
 */
export function sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  return framesOf(body.getReader());
}

async function* framesOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      buffered += decoder.decode(chunk.value, { stream: true });
      for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const frame: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) frame['comment'] = line.slice(1).trim();
          else {
            const colon = line.indexOf(':');
            frame[line.slice(0, colon)] = line.slice(colon + 1).replace(/^ /, '');
          }
        }
        yield frame;
      }
    }
  } finally {
    // Returned early (the test has what it waited for): the connection is closed, as a client going away does.
    await reader.cancel().catch(() => {});
  }
}

/** Opens an SSE stream of a session (with the token in the header, as a fetch client does); throws unless it answered 200. */
export async function openEventStream(
  daemon: { url: string; token: string },
  sessionId: string,
  options: { after?: number; lastEventId?: number; signal?: AbortSignal } = {},
): Promise<Response> {
  const query = options.after === undefined ? '' : `?after=${options.after}`;
  const response = await fetch(`${daemon.url}/v1/sessions/${sessionId}/events${query}`, {
    headers: {
      authorization: `Bearer ${daemon.token}`,
      ...(options.lastEventId === undefined ? {} : { 'last-event-id': String(options.lastEventId) }),
    },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (response.status !== 200)
    throw new Error(`the event stream of ${sessionId} answered ${response.status}: ${await response.text()}`);
  return response;
}

/**
 * Reads SSE events until one matches `until` (inclusive); checks each frame's id is its event's seq.
 * The stream stays open for a later call (a for-await loop would close it on return).
 */
export async function readEventsUntil(
  frames: AsyncGenerator<SseFrame>,
  until: (event: ProtocolEvent) => boolean,
): Promise<ProtocolEvent[]> {
  const events: ProtocolEvent[] = [];
  for (let next = await frames.next(); !next.done; next = await frames.next()) {
    const frame = next.value;
    if (frame.data === undefined || frame.event !== undefined) continue;
    const event = JSON.parse(frame.data) as ProtocolEvent;
    if (frame.id !== String(event.seq)) throw new Error(`frame id ${frame.id} is not the event's seq ${event.seq}`);
    events.push(event);
    if (until(event)) return events;
  }
  throw new Error(`the stream ended before the awaited event (after ${events.length} events)`);
}

export type ServerFrame = {
  type: string;
  id?: string | null;
  sessionId?: string;
  event?: ProtocolEvent;
  receipt?: Receipt;
  error?: { code: string };
};

/** A WebSocket client that records every frame and lets a test wait for one. */
export class SocketClient {
  readonly frames: ServerFrame[] = [];
  readonly socket: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
  private waiters: Array<() => void> = [];

  constructor(url: string, headers: Record<string, string> = {}) {
    this.socket = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/ws`, { headers });
    this.socket.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()) as ServerFrame);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      this.socket.on('close', (code, reason) => {
        this.wake();
        resolve({ code, reason: reason.toString() });
      });
    });
    this.socket.on('error', () => this.wake());
  }

  static async connect(daemon: { url: string; token: string }): Promise<SocketClient> {
    const client = new SocketClient(daemon.url);
    await new Promise<void>((resolve, reject) => {
      client.socket.once('open', () => resolve());
      client.socket.once('error', reject);
    });
    client.send({ type: 'auth', token: daemon.token });
    await client.waitFor((frame) => frame.type === 'ready');
    return client;
  }

  send(frame: unknown): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** The first recorded frame (from `from`) that matches, waiting for it if needed. */
  async waitFor(match: (frame: ServerFrame) => boolean, from = 0): Promise<ServerFrame> {
    for (;;) {
      const found = this.frames.slice(from).find(match);
      if (found) return found;
      if (this.socket.readyState === WebSocket.CLOSED)
        throw new Error(`socket closed; frames: ${JSON.stringify(this.frames.map((frame) => frame.type))}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  events(sessionId: string): ProtocolEvent[] {
    return this.frames
      .filter((frame) => frame.type === 'event' && frame.sessionId === sessionId)
      .map((frame) => frame.event!);
  }

  close(): void {
    this.socket.terminate();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}

/** A logger that keeps every line, so a test can wait for what the daemon reports (never a sleep). */
export class RecordingLogger {
  readonly lines: Array<Record<string, unknown> & { message?: string | undefined }> = [];
  private waiters: Array<() => void> = [];
  readonly debug = (fields: Record<string, unknown>, message?: string) => this.record(fields, message);
  readonly info = (fields: Record<string, unknown>, message?: string) => this.record(fields, message);
  readonly warn = (fields: Record<string, unknown>, message?: string) => this.record(fields, message);
  readonly error = (fields: Record<string, unknown>, message?: string) => this.record(fields, message);

  async waitFor(
    match: (line: Record<string, unknown> & { message?: string | undefined }) => boolean,
  ): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.lines.find(match);
      if (found) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private record(fields: Record<string, unknown>, message?: string): void {
    this.lines.push({ ...fields, message });
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }
}
