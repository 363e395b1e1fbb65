import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { getPriority } from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { createTetherClient } from '@tether/client';
import { errorReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { processesWithEnvironment } from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, spawnTether, tetherBin } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-daemon-cli-');

const served = useTetherServe(fixture);
const { serve } = served;

function tether(
  args: string[],
  extra: Record<string, string> = {},
  onStdoutLine?: (line: string, stdin: NodeJS.WritableStream) => void,
): Promise<FinishedTether> {
  const { child, finished } = spawnTether(args, {
    cwd: fixture.workspace,
    environment: { ...fixture.environment, ...extra },
    stdin: onStdoutLine ? 'pipe' : 'ignore',
    onStdoutLine: (line) => {
      if (child.stdin) onStdoutLine?.(line, child.stdin);
    },
  });
  return finished;
}

describe('tether commands through a daemon', () => {
  it('serve, token, run (through the daemon on its own), sessions, show, send, interrupt, close', async () => {
    const url = await serve();
    const token = (await tether(['token'])).stdout.trim();
    expect(token).toMatch(/^\S{20,}$/);
    // The web UI's built files at /, public (they hold no data), with the strict headers.
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="root"></div>');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");

    fixture.api.enqueue(textReply('Answered by the daemon.'), textReply('Second turn.'));
    // The daemon owns the data dir: run goes through it instead of failing with data_dir_in_use.
    const run = await tether(['run', 'Hello daemon']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Answered by the daemon.\n');
    const sessionId = /session (ses_[0-9a-f]{32})/.exec(run.stderr)![1]!;
    // The default transport drives the CLI itself (the SDK's launches say sdk-ts: see the next test).
    expect(
      fixture.api.requests.filter((request) => request.kind === 'turn').at(-1)!.view!.headers['user-agent'],
    ).not.toMatch(/sdk-ts/);

    const listed = JSON.parse((await tether(['sessions', '--json'])).stdout) as { sessionId: string; state: string }[];
    expect(listed.map((session) => session.sessionId)).toEqual([sessionId]);
    const shown = JSON.parse((await tether(['show', sessionId, '--json'])).stdout) as {
      state: string;
      lastSeq: number;
    };
    expect(shown.state).toBe('idle');

    const sent = await tether(['send', sessionId, 'And again']);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toBe('Second turn.\n');
    // Said before the turn, as tether run says it: piped, nobody here can answer a prompt.
    expect(sent.stderr).toMatch(
      /^tether: no terminal to ask at and no --answers: tool prompts and questions will be denied\.\n/,
    );
    expect((await tether(['interrupt', sessionId])).stderr).toContain('nothing was running');
    expect((await tether(['close', sessionId])).code).toBe(0);
    const closed = JSON.parse((await tether(['sessions', '--json', '--state', 'closed'])).stdout) as {
      sessionId: string;
    }[];
    expect(closed.map((session) => session.sessionId)).toEqual([sessionId]);

    // --server with the token from the environment reaches the same daemon.
    fixture.api.enqueue(textReply('Via --server.'));
    const remote = await tether(['run', '--server', url, 'Hi'], {
      TETHER_TOKEN: token,
      TETHER_HOME: path.join(fixture.root, 'elsewhere'),
    });
    expect(remote.stdout).toBe('Via --server.\n');
  });

  it('a copy of the data dir made while the daemon runs is not taken for that daemon: commands there read the copy', async () => {
    await serve();
    fixture.api.enqueue(textReply('Before the copy.'), textReply('After the copy.'));
    const first = await tether(['run', 'Before']);
    expect(first.code).toBe(0);
    const copy = path.join(fixture.root, 'copy');
    execFileSync('cp', ['-a', path.join(fixture.root, 'data'), copy]);
    // The daemon.json and tether.lock of the copy name the running daemon; its sessions go on without the copy.
    expect(existsSync(path.join(copy, 'daemon.json'))).toBe(true);
    expect((await tether(['run', 'After'])).code).toBe(0);

    const sessionsOf = async (...extra: string[]) =>
      (JSON.parse((await tether(['sessions', '--json', ...extra])).stdout) as { sessionId: string }[]).length;
    expect(await sessionsOf()).toBe(2);
    // Read from the copy itself (before: through the daemon, 2), the daemon's turns not landing in it.
    expect(await sessionsOf('--data-dir', copy)).toBe(1);
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(2);
  });

  it('serve with --data-dir names it in the token hint, and that command reads the token', async () => {
    const elsewhere = path.join(fixture.root, 'elsewhere data');
    await serve(['--data-dir', elsewhere]);
    await vi.waitFor(() =>
      expect(served.output()).toContain(`token: run \`tether token --data-dir '${elsewhere}'\` to show it`),
    );
    const token = await tether(['token', '--data-dir', elsewhere]);
    expect(token.code, token.stderr).toBe(0);
    expect(token.stdout.trim()).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  });

  it('serve on a port already taken says so and what to do (exit 2), and leaves nothing running', async () => {
    const url = await serve();
    const port = new URL(url).port;
    const taken = await tether(['serve', '--port', port], { TETHER_HOME: path.join(fixture.root, 'other') });
    expect(taken.code).toBe(2);
    expect(taken.stderr).toBe(
      `tether serve: 127.0.0.1:${port} is already in use (another tether serve, or another program). Stop it, or give another port: --port N (--port 0 takes any free one).\n`,
    );
  });

  it('run through the daemon says which in-process options it ignores (the daemon runs with its own)', async () => {
    await serve();
    fixture.api.enqueue(textReply('Answered by the daemon.'));
    const run = await tether(['run', '--claude-path', '/nowhere/claude', '--startup-timeout', '5', 'Hello daemon']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Answered by the daemon.\n');
    expect(run.stderr).toContain(
      'tether run: --claude-path, --startup-timeout ignored: the daemon runs the turn with the settings it was started with',
    );
  });

  it('serve on a --host that is no address of this machine says so (exit 2), warning of nothing it never bound', async () => {
    for (const [host, said] of [
      ['192.0.2.77', 'tether serve: 192.0.2.77 is not an address of this machine.'],
      ['no-such-host.invalid', 'tether serve: no-such-host.invalid is not an address of this machine (no such name).'],
    ] as const) {
      const refused = await tether(['serve', '--host', host, '--port', '0'], {
        TETHER_HOME: path.join(fixture.root, 'h'),
      });
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`${said} Give one it has with --host (default 127.0.0.1).`);
      expect(refused.stderr).not.toContain('WARNING');
    }
  });

  it('--server without http:// is a usage error saying what to give, not "not reachable" for a daemon that runs there', async () => {
    const url = await serve();
    const token = (await tether(['token'])).stdout.trim();
    const hostAndPort = url.replace(/^http:\/\//, '');
    const elsewhere = { TETHER_TOKEN: token, TETHER_HOME: path.join(fixture.root, 'elsewhere') };

    for (const args of [
      ['sessions', '--server', hostAndPort],
      ['attach', `ses_${'0'.repeat(32)}`, '--server', hostAndPort],
      ['run', '--server', hostAndPort, 'Hi'],
    ]) {
      const refused = await tether(args, elsewhere);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(`not "${hostAndPort}" (${url}?)`);
      expect(refused.stderr).not.toContain('not reachable');
      // The usage error alone: nothing about how prompts would have been answered.
      expect(refused.stderr).not.toContain('no terminal to ask at');
    }
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(0);
    expect((await tether(['sessions', '--server', url], elsewhere)).code).toBe(0);
  });

  it('a daemon whose token file went away is named as running, with how to reach it, not taken for no daemon', async () => {
    const url = await serve();
    const tokenFile = path.join(fixture.environment.TETHER_HOME!, 'daemon-token');
    const token = readFileSync(tokenFile, 'utf8').trim();
    renameSync(tokenFile, `${tokenFile}.moved`);
    const refused = await tether(['sessions']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`The daemon at ${url}`);
    expect(refused.stderr).toContain(`but its token file (${tokenFile}) is gone. Set TETHER_TOKEN to its token`);
    expect((await tether(['sessions'], { TETHER_TOKEN: token })).code).toBe(0);
  });

  it('a token refused that came from TETHER_TOKEN says so, since tether token shows the data dir’s, not the one sent', async () => {
    const url = await serve();
    const stale = { TETHER_TOKEN: 'tether_stale-token-of-another-daemon' };
    for (const args of [['sessions'], ['sessions', '--server', url]]) {
      const refused = await tether(args, stale);
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toContain(`The Tether daemon at ${url} refused the token`);
      expect(refused.stderr).toContain('the token sent was TETHER_TOKEN');
      expect(refused.stderr).toContain('[unauthorized]');
    }
    const json = await tether(['sessions', '--json'], stale);
    expect(json.code).toBe(1);
    const { error } = JSON.parse(json.stderr) as { error: { code: string; message: string } };
    expect(error.code).toBe('unauthorized');
    expect(error.message).toContain('the token sent was TETHER_TOKEN');
    // The data dir's own token, without TETHER_TOKEN, is not said to come from it.
    const wrongFile = await tether(['sessions'], { TETHER_HOME: fixture.environment.TETHER_HOME! });
    expect(wrongFile.code).toBe(0);
  });

  it('sessions and show name a session by its title, its terminal controls inert, and say how its last run ended', async () => {
    await serve();
    fixture.api.enqueue(textReply('Fixed.'), errorReply(500), errorReply(500));
    const run = await tether(['run', 'Fix the \u001b[31mred\u001b[0m bug\u009b2J  now']);
    expect(run.code, run.stderr).toBe(0);
    const sessionId = /session (ses_[0-9a-f]{32})/.exec(run.stderr)![1]!;
    const succeeded = await tether(['sessions']);
    expect(succeeded.stdout).toContain(' · last run succeeded');

    // The title is the first turn's text; a later turn that fails changes only the outcome.
    expect((await tether(['send', sessionId, 'Fail please'])).code).toBe(1);
    for (const args of [['sessions'], ['show', sessionId]]) {
      const shown = await tether(args);
      expect(shown.code, shown.stderr).toBe(0);
      const line = shown.stdout.split('\n')[0]!;
      expect(line).toMatch(new RegExp(`^${sessionId}  idle +\\S+  "Fix the red bug2J now"  `));
      expect(line).toContain(' · last run failed');
      // biome-ignore lint/suspicious/noControlCharactersInRegex: no control character may reach the terminal.
      expect(shown.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    }
  });

  it('serve --transport sdk: turns go through the Agent SDK, and the providers route says what it lacks', async () => {
    const url = await serve(['--transport', 'sdk']);
    const token = (await tether(['token'])).stdout.trim();
    const providers = (await (
      await fetch(`${url}/v1/providers`, { headers: { authorization: `Bearer ${token}` } })
    ).json()) as { providers: { name: string; capabilities: { sessionCost: boolean; interrupt: boolean } }[] };
    expect(providers.providers[0]).toMatchObject({
      name: 'claude',
      capabilities: { sessionCost: false, interrupt: true },
      availability: {
        available: true,
        transport: 'sdk',
        library: { name: '@anthropic-ai/claude-agent-sdk', version: '0.3.332' },
      },
    });
    fixture.api.enqueue(textReply('Answered through the SDK.'));
    const run = await tether(['run', 'Hello SDK']);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('Answered through the SDK.\n');
    // The same binary, launched by the SDK: its requests name the SDK as their entry point.
    const requests = fixture.api.requests.filter((request) => request.kind === 'turn');
    expect(requests.at(-1)!.view!.headers['user-agent']).toMatch(/sdk-ts/);
  });

  it('serve --max-open-sessions: one session too many is refused with capacity_exceeded until one closes', async () => {
    const url = await serve(['--max-open-sessions', '1']);
    const client = createTetherClient({ url, token: (await tether(['token'])).stdout.trim() });
    const workspace = { kind: 'directory' as const, path: path.join(fixture.root, 'workspace') };
    const { sessionId } = await client.openSession({ workspace });
    const refused = await client.openSession({ workspace }).then(
      () => null,
      (error: unknown) => error as { code?: string; message?: string },
    );
    expect(refused).toMatchObject({
      code: 'capacity_exceeded',
      message: expect.stringContaining('--max-open-sessions'),
    });
    await client.closeSession({ sessionId });
    expect((await client.openSession({ workspace })).sessionId).toMatch(/^ses_/);
    expect((await tether(['serve', '--max-open-sessions', 'lots'])).stderr).toContain(
      '--max-open-sessions takes a whole number',
    );
  });

  it('serve --interaction-timeout: an approval nobody answers is denied once it passes, and the run goes on', async () => {
    const url = await serve(['--interaction-timeout', '1']);
    const client = createTetherClient({ url, token: (await tether(['token'])).stdout.trim() });
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo unanswered > unanswered.txt', description: 'Write a file' }),
      textReply('Went on without it.'),
    );
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
    const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write the file.' }] });
    // Nobody answers: the daemon's policy does, and the model hears the denial in its next request.
    expect(await waitForRun(client, sessionId, runId)).toBe('succeeded');
    let settled: unknown;
    for await (const event of client.subscribe(sessionId, { afterSeq: 0 }))
      if (event.type === 'interaction.settled') {
        settled = event;
        break;
      }
    expect(settled).toMatchObject({ answer: { decision: 'deny' }, by: 'policy' });
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(2);
    expect(existsSync(path.join(fixture.workspace, 'unanswered.txt'))).toBe(false);
    const refused = await tether(['serve', '--interaction-timeout', '0']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--interaction-timeout takes a number of seconds from 1 to 604800');
  });

  it('run and send --approve deny through the daemon: told once, and the model hears the user chose it', async () => {
    await serve();
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo denied > denied.txt', description: 'Write a file' }),
      textReply('Went on without it.'),
    );
    const run = await tether(['run', '--approve', 'deny', 'Write the file.']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('tether: --approve deny: tool prompts and questions will be denied.\n');
    const sessionId = /session (ses_[0-9a-f]{32})/.exec(run.stderr)![1]!;
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo again > denied.txt', description: 'Write a file' }),
      textReply('Still without it.'),
    );
    const send = await tether(['send', sessionId, '--approve', 'deny', 'Try again.']);
    expect(send.code, send.stderr).toBe(0);
    expect(send.stderr).toContain('tether: --approve deny: tool prompts and questions will be denied.\n');
    const turns = fixture.api.requests.filter((request) => request.kind === 'turn');
    for (const turn of [turns[1]!, turns[3]!])
      expect(JSON.stringify(turn.body)).toContain(
        'The user chose to deny every prompt of this run (--approve deny), so this was not permitted.',
      );
    expect(existsSync(path.join(fixture.workspace, 'denied.txt'))).toBe(false);
  });

  it('serve --agent-nice 0 runs the agents as the daemon runs; outside 0-19 it is a usage error', async () => {
    await serve(['--agent-nice', '0']);
    fixture.api.enqueue(textReply('At the daemon priority.'));
    expect((await tether(['run', 'Hello'])).code).toBe(0);
    // The session's claude stays up, idle, after the turn.
    const agents = processesWithEnvironment('HOME', fixture.environment.HOME!).filter(
      (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'claude',
    );
    expect(agents).toHaveLength(1);
    expect(getPriority(agents[0]!)).toBe(getPriority(served.child!.pid!));
    const refused = await tether(['serve', '--agent-nice', '20']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--agent-nice takes a whole number from 0 (agents run as Tether does) to 19, not "20"',
    );
  });

  // As root, the claude CLI refuses bypass without IS_SANDBOX=1 (the fixture's environment has none); any other user gets it.
  it('run --resume --permission-mode bypass, refused as root without IS_SANDBOX, leaves the session as it was (its agent up, nothing recorded); taken as any other user', async () => {
    const url = await serve();
    fixture.api.enqueue(textReply('First.'));
    const first = await tether(['run', 'Hello']);
    expect(first.code, first.stderr).toBe(0);
    const sessionId = /session (ses_[0-9a-f]{32})/.exec(first.stderr)![1]!;
    // The run's context report is stored after its end: from then on the session is quiet.
    const client = createTetherClient({ url, token: (await tether(['token'])).stdout.trim() });
    for await (const event of client.subscribe(sessionId, { afterSeq: 0 }))
      if (event.type === 'session.context_measured') break;
    const agents = () =>
      processesWithEnvironment('HOME', fixture.environment.HOME!).filter(
        (pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'claude',
      );
    const agentBefore = agents();
    expect(agentBefore).toHaveLength(1);
    const show = async () =>
      JSON.parse((await tether(['show', sessionId, '--json'])).stdout) as { lastSeq: number; permissionMode: string };
    const before = await show();

    const asRoot = process.getuid?.() === 0;
    if (!asRoot) fixture.api.enqueue(textReply('Bypassing.'));
    const refused = await tether(['run', '--resume', sessionId, '--permission-mode', 'bypass', 'Again']);
    if (!asRoot) {
      expect(refused.code, refused.stderr).toBe(0);
      expect((await show()).permissionMode).toBe('bypass');
      return;
    }
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('IS_SANDBOX=1');
    expect(refused.stderr).toContain('[provider_configuration_refused]');
    // Nothing recorded (no process_stopped, no mode put back), and the session's agent was not stopped.
    expect(await show()).toMatchObject({ lastSeq: before.lastSeq, permissionMode: before.permissionMode });
    expect(agents()).toEqual(agentBefore);
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);
  });

  it('serve --allow-origin with a value that is no http(s) origin names the option, not the API field, nothing started', async () => {
    const refused = await tether(['serve', '--port', '0', '--allow-origin', 'localhost:5173']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'tether serve: --allow-origin "localhost:5173" is not an http(s) origin such as "http://localhost:5173". [invalid_command]',
    );
    expect(refused.stderr).not.toContain('allowOrigins');
    expect(refused.stderr).not.toContain('listening');
    expect(existsSync(path.join(fixture.environment.TETHER_HOME!, 'daemon.json'))).toBe(false);
  });

  it('serve --port on a port fetch refuses (6000: a "bad port") is a usage error, nothing started', async () => {
    const refused = await tether(['serve', '--port', '6000']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--port 6000 is one of the ports browsers and fetch refuse to connect to');
    expect(refused.stderr).not.toContain('listening');
  });

  it.each([
    ['before the prompt is raised', false],
    ['while the prompt is already waiting', true],
  ])('attach, started %s, shows the prompt, answers it from --answers; Ctrl-C detaches', async (_when, promptFirst) => {
    const url = await serve();
    const token = (await tether(['token'])).stdout.trim();
    const client = createTetherClient({ url, token });
    const { sessionId } = await client.openSession({
      workspace: { kind: 'directory', path: path.join(fixture.root, 'workspace') },
    });
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo attached > attached.txt', description: 'Write' }),
      textReply('Done.'),
    );
    const submit = () => client.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write the file.' }] });
    const { runId } = promptFirst ? await submit() : { runId: undefined };
    if (promptFirst) await waitForEvent(client, sessionId, 'interaction.requested');
    const attach = spawn(process.execPath, [tetherBin, 'attach', sessionId, '--json', '--answers', '-'], {
      cwd: fixture.root,
      env: fixture.environment,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const detached = new Promise<number | null>((resolve) => attach.once('close', resolve));
    // A host driving attach: it answers every prompt attach shows.
    onEvents(attach.stdout, (event) => {
      if (event.type === 'interaction.requested')
        attach.stdin.write(`${JSON.stringify({ ref: event.interactionRef, answer: { decision: 'approve' } })}\n`);
    });
    const started = runId ?? (await submit()).runId;
    expect(await waitForRun(client, sessionId, started)).toBe('succeeded');
    expect(readFileSync(path.join(fixture.root, 'workspace', 'attached.txt'), 'utf8')).toBe('attached\n');
    attach.kill('SIGINT');
    expect(await detached).toBe(0);
  });

  it('attach with nobody to ask (piped, no --answers) shows prompts and leaves them to whoever answers them', async () => {
    const url = await serve();
    const client = createTetherClient({ url, token: (await tether(['token'])).stdout.trim() });
    const { sessionId } = await client.openSession({
      workspace: { kind: 'directory', path: path.join(fixture.root, 'workspace') },
    });
    fixture.api.enqueue(
      toolUseReply('Bash', { command: 'echo watched > watched.txt', description: 'Write' }),
      textReply('Done.'),
    );
    const attach = spawn(process.execPath, [tetherBin, 'attach', sessionId, '--json'], {
      cwd: fixture.root,
      env: fixture.environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const detached = new Promise<number | null>((resolve) => attach.once('close', resolve));
    let stderr = '';
    const following = new Promise<void>((resolve) =>
      attach.stderr.setEncoding('utf8').on('data', (chunk) => {
        stderr += chunk;
        if (stderr.includes('prompts are shown, not answered here')) resolve();
      }),
    );
    const shown = new Promise<string>((resolve) =>
      onEvents(attach.stdout, (event) => {
        if (event.type === 'interaction.requested') resolve(event.interactionRef!);
      }),
    );
    // attach follows from the session's last event once it has said so: the turn is shown from its start.
    await following;
    const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write the file.' }] });
    const interactionRef = await shown;
    // The answer that settles the prompt is this client's: attach answered none.
    await client.respondInteraction({ sessionId, interactionRef, answer: { decision: 'approve' } });
    expect(await waitForRun(client, sessionId, runId)).toBe('succeeded');
    expect(readFileSync(path.join(fixture.root, 'workspace', 'watched.txt'), 'utf8')).toBe('watched\n');
    attach.kill('SIGINT');
    expect(await detached).toBe(0);
    expect(stderr).not.toMatch(/the answer was not accepted|the answer given here did not count/);
  });

  it('stops gracefully on SIGTERM and removes daemon.json', async () => {
    await serve();
    const info = path.join(fixture.environment.TETHER_HOME!, 'daemon.json');
    expect(existsSync(info)).toBe(true);
    const daemon = served.child!;
    const closed = new Promise<number | null>((resolve) => daemon.once('close', resolve));
    daemon.kill('SIGTERM');
    expect(await closed).toBe(0);
    expect(existsSync(info)).toBe(false);
  });
});

async function waitForEvent(
  client: ReturnType<typeof createTetherClient>,
  sessionId: string,
  type: string,
): Promise<void> {
  for await (const event of client.subscribe(sessionId, { afterSeq: 0 })) {
    if (event.type === type) return;
  }
}

async function waitForRun(
  client: ReturnType<typeof createTetherClient>,
  sessionId: string,
  runId: string,
): Promise<string> {
  for await (const event of client.subscribe(sessionId, { afterSeq: 0 })) {
    if (event.type === 'run.completed' && event.runId === runId) return event.outcome;
  }
  return 'never';
}

/** Each event `tether attach --json` writes, one JSON object a line. */
function onEvents(stdout: NodeJS.ReadableStream, onEvent: (event: { type: string; interactionRef?: string }) => void) {
  readline.createInterface({ input: stdout }).on('line', (line) => onEvent(JSON.parse(line)));
}
