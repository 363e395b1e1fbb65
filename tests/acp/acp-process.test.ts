import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { createTetherClient } from '@tether/client';
import { readToken } from '@tether/daemon';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { methods } from '@tether/acp/test-support';
import { readProcessCommandLine } from '@tether/provider-claude/test-support';
import type { ProtocolEvent } from '@tether/protocol';
import { openSqliteStore } from '@tether/store-sqlite';
import {
  type ClaudeTestEnvironment,
  countingClaude,
  createClaudeTestEnvironment,
  createGitRepository,
  processesWithEnvironment,
} from '@tether/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type AcpChild,
  acpEnvironment,
  newSession,
  promptText,
  quitEditor,
  runNodeScript,
  spawnAcp,
  startAcpProcess,
  tetherBin,
} from './acp-child.js';

const editorScript = path.join(path.dirname(tetherBin), '../../../tests/acp/fixtures/minimal-editor.mjs');

let environment: ClaudeTestEnvironment | undefined;
const started: Pick<AcpChild, 'child' | 'finished'>[] = [];
const serving: { kill(): void; closed: Promise<unknown> }[] = [];

afterEach(async () => {
  // SIGTERM, as an editor ends an agent it no longer needs: a SIGKILLed tether acp cannot end its agents
  // (the model list's read among them), and one left starting wrote into the removed HOME again.
  for (const acp of started.splice(0)) {
    if (acp.child.exitCode === null && acp.child.signalCode === null) acp.child.kill('SIGTERM');
    await acp.finished.catch(() => undefined);
  }
  for (const server of serving.splice(0)) {
    server.kill();
    await server.closed;
  }
  await environment?.cleanup();
  environment = undefined;
});

async function setUp() {
  environment = await createClaudeTestEnvironment();
  const dataDir = path.join(environment.home, 'tether-data');
  return { environment, dataDir, env: acpEnvironment(environment) };
}

async function acp(args: readonly string[], options: Parameters<typeof spawnAcp>[1]) {
  const child = await spawnAcp(args, options);
  started.push(child);
  return child;
}

/** tether acp on the set-up's data directory (after `leading` arguments), started in its workspace. */
function acpIn(setup: Awaited<ReturnType<typeof setUp>>, leading: readonly string[] = []) {
  return acp([...leading, '--data-dir', setup.dataDir], { environment: setup.env, cwd: setup.environment.workspace });
}

/** Each signal tether acp ends on, with the exit code it ends with. */
const signalExits = [
  ['SIGTERM', 143],
  ['SIGHUP', 129],
  ['SIGINT', 130],
  ['SIGQUIT', 131],
] as const;

/** A process's working directory, or null once it is gone. */
function cwdOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

/** Every live process this test started: each carries the test's HOME (tether and its claude children). */
function leftovers(): number[] {
  return processesWithEnvironment('HOME', environment!.home);
}

async function storedRuns(dataDir: string, sessionId: string) {
  const store = await openSqliteStore({ dataDir });
  try {
    return (await store.listRuns(sessionId)).map((run) => ({ status: run.status, outcome: run.outcome }));
  } finally {
    await store.close();
  }
}

/** Runs `tether ARGS` to the end with the test's environment. */
function tether(args: readonly string[], env: Record<string, string>, cwd: string) {
  return runNodeScript(tetherBin, args, env, cwd);
}

/** `tether serve` on the data dir; resolves with its URL once it listens. */
async function serve(dataDir: string, env: Record<string, string>, cwd: string): Promise<string> {
  return (await serveChild(dataDir, env, cwd)).url;
}

/** serve, with the daemon's process. */
function serveChild(
  dataDir: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tetherBin, 'serve', '--port', '0', '--data-dir', dataDir], {
      cwd,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    serving.push({ kill: () => child.kill('SIGTERM'), closed: new Promise((done) => child.once('close', done)) });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolve({ url: match[1]!, child });
    });
    child.on('close', (code) => reject(new Error(`tether serve exited (${code}): ${stderr}`)));
  });
}

function expectOnlyProtocolOnStdout(child: AcpChild) {
  expect(child.stdoutLines.length).toBeGreaterThan(0);
  for (const line of child.stdoutLines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
}

describe('tether acp as a child process, against the real binary and the fake model', () => {
  it.each(['cli', 'sdk'])(
    'answers a prompt with its chunks and end_turn, writes nothing but protocol on stdout, and ends with its client (transport %s)',
    async (transport) => {
      const { environment, dataDir, env } = await setUp();
      const claude = await countingClaude(environment);
      environment.api.enqueue(textReply('Hello from the fake model.', { chunks: 4 }));
      const child = await acpIn({ environment, dataDir, env }, [
        '--transport',
        transport,
        '--claude-path',
        claude.path,
      ]);
      const sessionId = await newSession(child, environment.workspace);
      const response = await promptText(child, sessionId, 'Say hello.');
      expect(response).toEqual({ stopReason: 'end_turn' });
      expect(child.agentText(sessionId)).toBe('Hello from the fake model.');
      // The model option lists the agent's models, read from the session's agent: one agent started in all.
      await child.waitForUpdate(
        ({ update }) =>
          update.sessionUpdate === 'config_option_update' &&
          update.configOptions.some((option) => JSON.stringify(option).includes('"sonnet"')),
      );
      expect(await claude.starts()).toHaveLength(1);
      const ended = await quitEditor(child);
      expect(ended.code).toBe(0);
      expectOnlyProtocolOnStdout(child);
      expect(ended.stderr).not.toContain('Say hello.');
      expect(leftovers()).toEqual([]);
      expect(await storedRuns(dataDir, sessionId)).toEqual([{ status: 'completed', outcome: 'succeeded' }]);
    },
  );

  it('cancelled mid-stream: the prompt ends cancelled, the run is interrupted, and no process is left once the editor quits', async () => {
    const { environment, dataDir, env } = await setUp();
    environment.api.enqueue(textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }));
    const child = await acpIn({ environment, dataDir, env });
    const sessionId = await newSession(child, environment.workspace);
    const prompt = promptText(child, sessionId, 'Tell me a long story.');
    await child.waitForUpdate((notification) => notification.update.sessionUpdate === 'agent_message_chunk');
    await child.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await prompt).toEqual({ stopReason: 'cancelled' });
    expect((await quitEditor(child)).code).toBe(0);
    expect(leftovers()).toEqual([]);
    expect(await storedRuns(dataDir, sessionId)).toEqual([{ status: 'completed', outcome: 'interrupted' }]);
  });

  it.each(signalExits)(
    '%s mid-turn: the run ends interrupted, every agent process ends, exit %i',
    async (signal, code) => {
      const { environment, dataDir, env } = await setUp();
      environment.api.enqueue(holdReply());
      const child = await acpIn({ environment, dataDir, env });
      const sessionId = await newSession(child, environment.workspace);
      const prompt = promptText(child, sessionId, 'Wait for it.').catch((error: unknown) => error);
      await vi.waitFor(() => expect(environment.api.requests.some((request) => request.kind === 'turn')).toBe(true), {
        timeout: 30_000,
      });
      child.child.kill(signal);
      const ended = await child.finished;
      expect(ended.code).toBe(code);
      // Answered before the agent went (cancelled), or the connection closed under it: never left hanging.
      const answer = await prompt;
      expect(answer instanceof Error || (answer as { stopReason?: string }).stopReason === 'cancelled').toBe(true);
      expect(leftovers()).toEqual([]);
      expect(await storedRuns(dataDir, sessionId)).toEqual([{ status: 'completed', outcome: 'interrupted' }]);
    },
  );

  it.each(signalExits)(
    '%s before any prompt: the agent session/new started ends too, exit %i',
    async (signal, code) => {
      const { environment, dataDir, env } = await setUp();
      const child = await acpIn({ environment, dataDir, env });
      await newSession(child, environment.workspace);
      // session/new starts the session's claude in the background (startAgent): it runs in the workspace.
      const workspace = realpathSync(environment.workspace);
      const sessionAgents = () =>
        leftovers().filter(
          (pid) => cwdOf(pid) === workspace && (readProcessCommandLine(pid) ?? []).includes('stream-json'),
        );
      await vi.waitFor(() => expect(sessionAgents()).toHaveLength(1), { timeout: 30_000 });
      child.child.kill(signal);
      expect((await child.finished).code).toBe(code);
      expect(leftovers()).toEqual([]);
    },
  );

  it('the editor killed mid-turn: tether acp sees its stdin close, the run ends interrupted, nothing is orphaned', async () => {
    const { environment, dataDir, env } = await setUp();
    environment.api.enqueue(textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }));
    const editor = spawn(
      process.execPath,
      [editorScript, tetherBin, environment.workspace, '--', '--data-dir', dataDir],
      { cwd: environment.workspace, env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const editorClosed = new Promise((resolve) => editor.once('close', resolve));
    // The editor's stderr is the agent's (inherited, as an editor does): its log tells how the agent ended.
    let agentLog = '';
    editor.stderr.setEncoding('utf8').on('data', (chunk) => (agentLog += chunk));
    let agentPid = 0;
    let sessionId = '';
    await new Promise<void>((resolve) => {
      readline.createInterface({ input: editor.stdout }).on('line', (line) => {
        const message = JSON.parse(line) as {
          agentPid?: number;
          result?: { sessionId?: string };
          params?: { update?: { sessionUpdate?: string } };
        };
        if (message.agentPid) agentPid = message.agentPid;
        if (message.result?.sessionId) sessionId = message.result.sessionId;
        if (message.params?.update?.sessionUpdate === 'agent_message_chunk') resolve();
      });
    });
    editor.kill('SIGKILL');
    await editorClosed;
    // The agent, orphaned, must notice and end everything on its own.
    await vi.waitFor(() => expect(leftovers()).toEqual([]), { timeout: 20_000, interval: 100 });
    expect(agentPid).toBeGreaterThan(0);
    expect(agentLog).toContain('acp connection closed');
    expect(await storedRuns(dataDir, sessionId)).toEqual([{ status: 'completed', outcome: 'interrupted' }]);
  });

  it('the editor stops reading its stdout mid-turn (its end of the pipe gone): tether acp ends as if it quit, nothing is orphaned', async () => {
    const { environment, dataDir, env } = await setUp();
    environment.api.enqueue(textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }));
    const child = await acpIn({ environment, dataDir, env });
    const sessionId = await newSession(child, environment.workspace);
    void promptText(child, sessionId, 'Tell me a long story.').catch(() => {});
    await child.waitForUpdate((notification) => notification.update.sessionUpdate === 'agent_message_chunk');
    child.child.stdout!.destroy();
    // Its stdin stays open: only the failed writes tell the agent that nobody listens.
    const ended = await child.finished;
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(ended.stderr).not.toContain('EPIPE');
    expect(leftovers()).toEqual([]);
    expect(await storedRuns(dataDir, sessionId)).toEqual([{ status: 'completed', outcome: 'interrupted' }]);
  });

  it('a client message past the ACP size limit ends tether acp as if the editor quit: said on stderr, exit 0, its agent ended', async () => {
    const { environment, dataDir, env } = await setUp();
    const child = await acpIn({ environment, dataDir, env });
    const sessionId = await newSession(child, environment.workspace);
    // session/new starts the session's agent: it must not outlive tether acp.
    await vi.waitFor(() => expect(leftovers().length).toBeGreaterThan(1), { timeout: 20_000, interval: 50 });
    const line = JSON.stringify({
      jsonrpc: '2.0',
      id: 99,
      method: 'session/prompt',
      params: { sessionId, prompt: [{ type: 'text', text: 'x'.repeat(33 * 1024 * 1024) }] },
    });
    child.child.stdin!.write(`${line}\n`);
    const ended = await child.finished;
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(ended.stderr).toContain('tether acp: stopped reading the client (Incoming ACP data exceeds');
    expect(ended.stderr).not.toContain('ERR_INVALID_STATE');
    expect(leftovers()).toEqual([]);
  });

  it('--help shows its usage on stdout; an argument or a bad option is a usage error on stderr, exit 2', async () => {
    const { environment, env } = await setUp();
    const help = await tether(['acp', '--help'], env, environment.workspace);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('usage: tether acp [--server URL]');
    for (const args of [
      ['acp', 'a prompt'],
      ['acp', '--transport', 'pipe'],
    ]) {
      const refused = await tether(args, env, environment.workspace);
      expect(refused).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr).toMatch(/^tether acp: /);
    }
  });

  it.each([
    // Another in-process tether acp, its client connected, holds the data dir.
    {
      cause: 'the data dir is in use by another Tether process',
      holder: true,
      args: [],
      code: 1,
      // With the way to share it: a daemon every tether acp goes through (several editors, acpx).
      said: 'run `tether serve` so every command shares the data dir through the daemon',
    },
    // Nothing listens on port 1: the connection is refused at once.
    {
      cause: 'the store is out of reach',
      holder: false,
      args: ['--store', 'postgres://tether:not-a-secret@127.0.0.1:1/tether'],
      code: 1,
      said: '[store_failure]',
    },
    {
      cause: '--server has no token',
      holder: false,
      args: ['--server', 'http://127.0.0.1:1'],
      code: 2,
      said: 'No token for',
    },
  ])(
    'cannot start because $cause: says so on stderr and exits $code at once, its client still connected and asking',
    async ({ holder, args, code, said }) => {
      const setup = await setUp();
      const { environment, dataDir, env } = setup;
      if (holder) await acpIn(setup);
      const { child, finished } = startAcpProcess([...args, '--data-dir', dataDir], {
        environment: env,
        cwd: environment.workspace,
      });
      started.push({ child, finished });
      let stdout = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
      // As an editor starts an agent: initialize at once, stdin left open for what follows.
      child.stdin!.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {} } })}\n`,
      );
      const ended = await finished;
      expect(ended).toMatchObject({ code, signal: null });
      expect(ended.stderr).toMatch(/^tether acp: /);
      expect(ended.stderr).toContain(said);
      expect(stdout).toBe('');
    },
  );

  it('session/list shows a session made by `tether run` on the same data dir, with its title', async () => {
    const { environment, dataDir, env } = await setUp();
    environment.api.enqueue(textReply('Ran from the terminal.'));
    const run = await tether(
      ['run', '--json', '--data-dir', dataDir, '--cwd', environment.workspace, 'Summarise the repository'],
      env,
      environment.workspace,
    );
    expect(run.code).toBe(0);
    const sessionId = (JSON.parse(run.stdout.trimEnd().split('\n')[0]!) as { sessionId: string }).sessionId;
    const child = await acpIn({ environment, dataDir, env });
    const { sessions } = await child.agent.request(methods.agent.session.list, {});
    expect(sessions).toEqual([
      expect.objectContaining({ sessionId, cwd: environment.workspace, title: 'Summarise the repository' }),
    ]);
    expect((await quitEditor(child)).code).toBe(0);
  });

  it('a worktree session (`tether run --worktree`) loads in the repository it was made from, its tools running in its worktree; another folder is refused', async () => {
    const { environment, dataDir, env } = await setUp();
    const repository = path.join(environment.workspace, 'repository');
    await createGitRepository(
      repository,
      { 'README.md': 'hello\n' },
      { PATH: '/usr/bin:/bin', HOME: environment.home },
    );
    environment.api.enqueue(textReply('Started in a worktree.'));
    const run = await tether(
      ['run', '--json', '--worktree', '--data-dir', dataDir, '--cwd', repository, 'Start here'],
      env,
      repository,
    );
    expect(run.code, run.stderr).toBe(0);
    const sessionId = (JSON.parse(run.stdout.trimEnd().split('\n')[0]!) as { sessionId: string }).sessionId;
    const worktree = path.join(dataDir, 'worktrees', sessionId);
    const child = await acp(['--data-dir', dataDir], {
      environment: env,
      cwd: repository,
      onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }),
    });
    await expect(
      child.agent.request(methods.agent.session.load, { sessionId, cwd: environment.workspace, mcpServers: [] }),
    ).rejects.toMatchObject({
      code: -32602,
      data: { code: 'invalid_workspace' },
      message: expect.stringContaining(`belongs to ${worktree} (a worktree of ${repository})`),
    });
    await child.agent.request(methods.agent.session.load, { sessionId, cwd: `${repository}/`, mcpServers: [] });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'pwd > where.txt', description: 'Say where' }),
      textReply('Done.'),
    );
    expect(await promptText(child, sessionId, 'Where are you?')).toEqual({ stopReason: 'end_turn' });
    expect(readFileSync(path.join(worktree, 'where.txt'), 'utf8')).toBe(`${worktree}\n`);
    expect((await quitEditor(child)).code).toBe(0);
  });

  it('through --server: the session outlives the editor, and `tether show` sees it', async () => {
    const { environment, dataDir, env } = await setUp();
    const url = await serve(dataDir, env, environment.workspace);
    environment.api.enqueue(textReply('Answered by the daemon.'));
    const child = await acpIn({ environment, dataDir, env }, ['--server', url]);
    const sessionId = await newSession(child, environment.workspace);
    const response = await promptText(child, sessionId, 'Hello daemon.');
    expect(response).toEqual({ stopReason: 'end_turn' });
    expect(child.agentText(sessionId)).toBe('Answered by the daemon.');
    expect((await quitEditor(child)).code).toBe(0);
    const shown = await tether(['show', sessionId, '--json', '--data-dir', dataDir], env, environment.workspace);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ sessionId, state: 'idle', title: 'Hello daemon.' });
  });

  it("through --server: while the daemon is gone mid-prompt, the agent's log says it is not answering (the prompt is not silently hung)", async () => {
    const { environment, dataDir, env } = await setUp();
    const daemon = await serveChild(dataDir, env, environment.workspace);
    environment.api.enqueue(holdReply());
    const child = await acpIn({ environment, dataDir, env }, ['--server', daemon.url]);
    let log = '';
    child.child.stderr!.on('data', (chunk) => (log += chunk));
    const sessionId = await newSession(child, environment.workspace);
    const prompt = promptText(child, sessionId, 'Wait for me.').catch((error: unknown) => error);
    await environment.api.waitForRequests(1, { kind: 'turn' });
    daemon.child.kill('SIGKILL');
    await vi.waitFor(
      () => expect(log).toContain("is not answering; reconnecting… (the editor's Stop ends the prompt)"),
      { timeout: 15_000 },
    );
    expect((await quitEditor(child)).code).toBe(0);
    await prompt;
    // The daemon's claude, orphaned by the SIGKILL, is ended by the daemon's exit watch (SIGTERM, then
    // SIGKILL a second later): waited for, as the test of a SIGKILLed editor waits for its agent's.
    await vi.waitFor(() => expect(leftovers()).toEqual([]), { timeout: 20_000, interval: 100 });
  });

  it('through --server: a turn the editor started goes on after it quits, and completes in the daemon', async () => {
    const { environment, dataDir, env } = await setUp();
    const url = await serve(dataDir, env, environment.workspace);
    environment.api.enqueue(textReply('still going '.repeat(40), { chunks: 40, delayMs: 25 }));
    const child = await acpIn({ environment, dataDir, env }, ['--server', url]);
    const sessionId = await newSession(child, environment.workspace);
    const prompt = promptText(child, sessionId, 'Keep going without me.').catch((error: unknown) => error);
    await vi.waitFor(() => expect(child.agentText(sessionId)).not.toBe(''), { timeout: 30_000 });
    expect((await quitEditor(child)).code).toBe(0);
    // The connection closed under the prompt: it is answered or dropped, never left hanging.
    await prompt;
    // The session's one run, followed from the daemon: it ends on its own, with the whole answer.
    const daemon = createTetherClient({ url, token: (await readToken(dataDir))! });
    let completed: ProtocolEvent | undefined;
    for await (const event of daemon.subscribe(sessionId)) {
      if (event.type === 'run.completed') {
        completed = event;
        break;
      }
    }
    expect(completed).toMatchObject({ outcome: 'succeeded' });
  });

  it("through --server: an approval answered on the daemon's side settles the client's pending request (first answer wins)", async () => {
    const { environment, dataDir, env } = await setUp();
    const url = await serve(dataDir, env, environment.workspace);
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo from-daemon > answered.txt', description: 'Write a file' }),
      textReply('Written.'),
    );
    let withdrawn!: () => void;
    const requestWithdrawn = new Promise<void>((resolve) => (withdrawn = resolve));
    const child = await acp(['--server', url, '--data-dir', dataDir], {
      environment: env,
      cwd: environment.workspace,
      // The editor's user never answers: the request stays open until the agent withdraws it.
      onPermission: (_request, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            withdrawn();
            resolve({ outcome: { outcome: 'cancelled' } });
          }),
        ),
    });
    const sessionId = await newSession(child, environment.workspace);
    const prompt = promptText(child, sessionId, 'Write the file.');
    const daemon = createTetherClient({ url, token: (await readToken(dataDir))! });
    const abort = new AbortController();
    let requested: Extract<ProtocolEvent, { type: 'interaction.requested' }> | undefined;
    for await (const event of daemon.subscribe(sessionId, { signal: abort.signal })) {
      if (event.type === 'interaction.requested') {
        requested = event;
        abort.abort();
      }
    }
    await daemon.respondInteraction({
      sessionId,
      interactionRef: requested!.interactionRef,
      answer: { decision: 'approve' },
    });
    await requestWithdrawn;
    expect(await prompt).toEqual({ stopReason: 'end_turn' });
    expect(child.agentText(sessionId)).toBe('Written.');
    const updates = child.notifications
      .filter((notification) => notification.sessionId === sessionId)
      .map(({ update }) => update);
    expect(updates.filter((update) => update.sessionUpdate === 'tool_call_update')).toMatchObject([
      { status: 'in_progress' },
      { status: 'completed' },
    ]);
    expect((await quitEditor(child)).code).toBe(0);
  });
});
