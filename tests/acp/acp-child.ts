import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  type ClientContext,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  client,
  methods,
  ndJsonStream,
} from '@tether/acp/test-support';
import type { ClaudeTestEnvironment } from '@tether/testkit';

/** The committed `tether` executable, run as an editor runs it. */
export const tetherBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/cli/bin/tether.js');

/** Everything `tether acp` and its claude children see, built explicitly: the test's claude environment plus the binary. */
export function acpEnvironment(environment: ClaudeTestEnvironment, extra: Record<string, string> = {}) {
  return { ...environment.environment, TETHER_CLAUDE_PATH: environment.claudePath, ...extra };
}

export interface AcpChild {
  readonly child: ChildProcess;
  /** The ACP client's side, initialized. */
  readonly agent: ClientContext;
  readonly notifications: SessionNotification[];
  /** The text of a session's agent_message_chunk updates, joined. */
  agentText(sessionId: string): string;
  /** Resolves with the first notification that matches (or one already received). */
  waitForUpdate(match: (notification: SessionNotification) => boolean): Promise<SessionNotification>;
  /** Every line the agent wrote on stdout, each of which must be JSON-RPC. */
  readonly stdoutLines: string[];
  /** Settles when the agent process has exited. */
  readonly finished: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>;
}

export interface AcpChildOptions {
  readonly environment: Record<string, string>;
  readonly cwd: string;
  readonly onPermission?: (
    request: RequestPermissionRequest,
    signal: AbortSignal,
  ) => Promise<RequestPermissionResponse> | RequestPermissionResponse;
}

/** `tether acp ARGS` as a child process, every stdio a pipe (stdin stays open, as an editor's does): nothing said to it yet. */
export function startAcpProcess(args: readonly string[], options: Pick<AcpChildOptions, 'environment' | 'cwd'>) {
  const child = spawn(process.execPath, [tetherBin, 'acp', ...args], {
    cwd: options.cwd,
    env: options.environment,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const finished = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve, reject) => {
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stderr }));
    },
  );
  return { child, finished };
}

/** `tether acp ARGS` as a child process with the SDK's client on its stdin/stdout, initialized. */
export async function spawnAcp(args: readonly string[], options: AcpChildOptions): Promise<AcpChild> {
  const { child, finished } = startAcpProcess(args, options);
  // A copy of stdout for the assertion that nothing but protocol is written there.
  const stdoutLines: string[] = [];
  let pending = '';
  child.stdout!.on('data', (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    stdoutLines.push(...lines);
  });
  const notifications: SessionNotification[] = [];
  const watchers: { match: (notification: SessionNotification) => boolean; resolve(n: SessionNotification): void }[] =
    [];
  let app = client({ name: 'tether-process-test' }).onNotification(methods.client.session.update, ({ params }) => {
    notifications.push(params);
    for (const watcher of watchers.filter((candidate) => candidate.match(params))) {
      watchers.splice(watchers.indexOf(watcher), 1);
      watcher.resolve(params);
    }
  });
  if (options.onPermission) {
    const onPermission = options.onPermission;
    app = app.onRequest(methods.client.session.requestPermission, ({ params, signal }) => onPermission(params, signal));
  }
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
    ),
  );
  await connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {},
  });
  return {
    child,
    agent: connection.agent,
    notifications,
    agentText: (sessionId) =>
      notifications
        .filter((notification) => notification.sessionId === sessionId)
        .map(({ update }) =>
          update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text' ? update.content.text : '',
        )
        .join(''),
    waitForUpdate(match) {
      const seen = notifications.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => watchers.push({ match, resolve }));
    },
    stdoutLines,
    finished,
  };
}

/** Runs `node SCRIPT ARGS` to its end with exactly the given environment: its exit code and output. */
export function runNodeScript(script: string, args: readonly string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** session/new in the directory: the session's id. */
export async function newSession(acp: AcpChild, cwd: string): Promise<string> {
  const { sessionId } = await acp.agent.request(methods.agent.session.new, { cwd, mcpServers: [] });
  return sessionId;
}

/** One text prompt: its answer. */
export function promptText(acp: AcpChild, sessionId: string, text: string) {
  return acp.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
}

/** Ends `tether acp` as an editor that quits does: its stdin closes. */
export async function quitEditor(acp: AcpChild) {
  acp.child.stdin!.end();
  return acp.finished;
}
