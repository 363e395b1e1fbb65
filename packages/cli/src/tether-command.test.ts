import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { errorReply, holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { openSqliteStore } from '@tether/store-sqlite';
import { fakeClaudeCliPath, fakeCliScript, fakeCliTurn } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, sessionIdFrom, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-cli-');

function tether(
  args: string[],
  options: {
    environment?: Record<string, string>;
    onSpawn?: (pid: number) => void;
    onStdoutLine?: (line: string, stdin: NodeJS.WritableStream) => void;
    onStderr?: (text: string) => void;
  } = {},
): Promise<FinishedTether> {
  const { child, finished } = spawnTether(args, {
    cwd: fixture.workspace,
    environment: options.environment ?? fixture.environment,
    stdin: options.onStdoutLine ? 'pipe' : 'ignore',
    onStdoutLine: (line) => {
      if (child.stdin) options.onStdoutLine?.(line, child.stdin);
    },
    onStderr: options.onStderr,
  });
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  return finished;
}

describe('tether run', () => {
  it('streams the answer on stdout, a usage summary on stderr, and exits 0', async () => {
    fixture.api.enqueue(
      textReply('Hello from the fake model.', { chunks: 5, usage: { inputTokens: 10, outputTokens: 5 } }),
    );
    const result = await tether(['run', 'Say hello']);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Hello from the fake model.\n');
    expect(result.stderr).toMatch(/✓ succeeded · 10 in \/ 5 out tokens/);
  });

  it('sessions lists a session whose folder name holds a line break on one line, the path quoted', async () => {
    const folder = path.join(fixture.root, 'two\nlines');
    mkdirSync(folder);
    fixture.api.enqueue(textReply('Done.'));
    expect((await tether(['run', '--cwd', folder, 'Hi'])).code).toBe(0);
    const listed = (await tether(['sessions'])).stdout;
    expect(listed.trimEnd().split('\n')).toHaveLength(1);
    expect(listed).toContain(JSON.stringify(folder));
  });

  it('prints exactly one neutral event per line with --json', async () => {
    fixture.api.enqueue(textReply('JSON mode.', { chunks: 3 }));
    const result = await tether(['run', '--json', 'Say it']);
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; seq: number });
    expect(events[0]!.type).toBe('session.opened');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    // Deltas of one block that were waiting together are one event: the text, not the count, is fixed.
    const deltas = events.filter((event) => event.type === 'run.message_delta') as unknown as { text: string }[];
    expect(deltas.map((delta) => delta.text).join('')).toBe('JSON mode.');
  });

  it('continues a session after its process ended with --resume (the API request carries the history)', async () => {
    fixture.api.enqueue(textReply('Remembered: KIWI.'), textReply('It was KIWI.'));
    const first = await tether(['run', 'Remember KIWI']);
    expect(first.code).toBe(0);
    const sessionId = sessionIdFrom(first.stderr);
    const second = await tether(['run', '--resume', sessionId, 'Which fruit?']);
    expect(second.code).toBe(0);
    expect(second.stdout).toBe('It was KIWI.\n');
    const history = JSON.stringify(
      (fixture.api.requests.filter((request) => request.kind === 'turn')[1]!.body as { messages: unknown }).messages,
    );
    expect(history).toContain('Remember KIWI');
    expect(history).toContain('Remembered: KIWI.');
  });

  it('reads a prompt given as - from stdin: its text reaches the model, never the command line', async () => {
    fixture.api.enqueue(textReply('Read from stdin.'));
    const secretLine = 'the plan for PROJECT-ORCHID, line one\nline two';
    const { child, finished } = spawnTether(['run', '-'], {
      cwd: fixture.workspace,
      environment: fixture.environment,
      stdin: 'pipe',
    });
    child.stdin!.end(`${secretLine}\n`);
    const result = await finished;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('Read from stdin.\n');
    const turn = fixture.api.requests.filter((request) => request.kind === 'turn').at(-1)!;
    // The trailing line break the shell adds is not part of the turn; the one inside it is.
    expect(JSON.stringify((turn.body as { messages: unknown }).messages)).toContain(
      JSON.stringify(secretLine).slice(1, -1),
    );
    expect(JSON.stringify((turn.body as { messages: unknown }).messages)).not.toContain('line two\\n');
  });

  it('refuses - as the prompt when stdin is empty, not UTF-8 or also carries the answers, before anything runs', async () => {
    const piped = (input: Buffer | string) => {
      const started = spawnTether(['run', '-'], {
        cwd: fixture.workspace,
        environment: fixture.environment,
        stdin: 'pipe',
      });
      started.child.stdin!.end(input);
      return started.finished;
    };
    const empty = piped('\n\n');
    // A binary file (or Latin-1 text) piped in by mistake: refused, not sent with U+FFFD in place of its bytes.
    const notUtf8 = piped(Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' and \u00e9 ok')]));
    const both = await tether(['run', '--answers', '-', '-']);
    const [emptyResult, notUtf8Result] = await Promise.all([empty, notUtf8]);
    expect([emptyResult.code, notUtf8Result.code, both.code]).toEqual([2, 2, 2]);
    expect(notUtf8Result.stderr).toBe(
      'tether run: the prompt read from stdin is not UTF-8 text (a binary file, or text in another encoding?). Convert it to UTF-8 first (e.g. iconv -f LATIN1 -t UTF-8), or put the file in the workspace and point the agent at it with --file.\n',
    );
    expect(emptyResult.stderr).toContain(
      'the prompt read from stdin is empty. Pipe the text of the turn in, e.g. echo "…" | tether run -.',
    );
    expect(both.stderr).toContain('stdin can carry the prompt (-) or the answers (--answers -), not both');
    expect(fixture.api.requests).toHaveLength(0);
  });

  it('exits 1 with the error code when the run fails', async () => {
    fixture.api.enqueue(errorReply(500), errorReply(500));
    const result = await tether(['run', 'Fail please']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('[provider_api_error]');
    expect(result.stderr).toContain('HTTP 500');
  });

  it('exits 2 for usage errors without starting anything', async () => {
    const noPrompt = await tether(['run']);
    expect(noPrompt.code).toBe(2);
    expect(noPrompt.stderr).toContain('usage: tether run');
    // Quoted but empty: said in one line, not as a missing argument with the whole usage.
    const emptyPrompt = await tether(['run', '  ']);
    expect(emptyPrompt.code).toBe(2);
    expect(emptyPrompt.stderr).toBe(
      'tether run: the prompt is empty. Give the text of the turn, e.g. tether run "explain this repository".\n',
    );
    const badMode = await tether(['run', '--permission-mode', 'yolo', 'hi']);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain('Unknown permission mode');
    const badTransport = await tether(['run', '--transport', 'grpc', 'hi']);
    expect(badTransport.code).toBe(2);
    expect(badTransport.stderr).toContain('--transport takes cli or sdk, not "grpc"');
    expect(fixture.api.requests).toHaveLength(0);
  });

  it('refuses a data directory another process owns, naming that process', async () => {
    const store = await openSqliteStore({ dataDir: fixture.environment.TETHER_HOME! });
    try {
      const result = await tether(['run', 'hi']);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('[data_dir_in_use]');
      expect(result.stderr).toContain(String(process.pid));
      // How to share it, and nothing said before of prompts this run never got to.
      expect(result.stderr).toContain('run `tether serve` so every command shares the data dir');
      expect(result.stderr).not.toContain('no terminal to ask at');
    } finally {
      await store.close();
    }
  });

  it('reports a missing claude binary as provider_unavailable, naming the path', async () => {
    const result = await tether(['run', '--claude-path', path.join(fixture.root, 'no-such-claude'), 'hi']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('[provider_unavailable]');
    expect(result.stderr).toContain('no-such-claude');
  });

  it('stops on Ctrl-C: the run completes interrupted, exit code 130, and the session can be resumed', async () => {
    fixture.api.enqueue(holdReply(), textReply('Resumed fine.'));
    let pid = 0;
    const finished = tether(['run', '--json', 'Take your time'], { onSpawn: (spawned) => (pid = spawned) });
    await fixture.api.waitForRequests(1, { kind: 'turn' });
    const signalledAt = performance.now();
    process.kill(pid, 'SIGINT');
    const result = await finished;
    console.info(`Ctrl-C mid-turn: ${Math.round(performance.now() - signalledAt)} ms from the signal to exit`);
    expect(result.code).toBe(130);
    const events = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; sessionId: string; outcome?: string });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    const resumed = await tether(['run', '--resume', events[0]!.sessionId, 'Again']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toBe('Resumed fine.\n');
  });

  it('a second Ctrl-C closes the session when the first did not stop the run', async () => {
    // A scripted CLI that starts the turn, streams a little, then ignores the stop request.
    const steps = fakeCliTurn('never finishes').slice(0, 3);
    let pid = 0;
    let streaming!: () => void;
    let stopping!: () => void;
    const streamed = new Promise<void>((resolve) => (streaming = resolve));
    const stopRequested = new Promise<void>((resolve) => (stopping = resolve));
    const finished = tether(['run', '--json', 'Take your time'], {
      environment: { ...fixture.environment, TETHER_CLAUDE_PATH: fakeClaudeCliPath(), ...fakeCliScript([steps]) },
      onSpawn: (spawned) => (pid = spawned),
      onStdoutLine: (line) => {
        if (line.includes('"run.message_delta"')) streaming();
      },
      onStderr: (text) => {
        if (text.includes('stopping the run')) stopping();
      },
    });
    await streamed;
    process.kill(pid, 'SIGINT');
    await stopRequested;
    process.kill(pid, 'SIGINT');
    const result = await finished;
    expect(result.stderr).toContain('closing the session');
    const events = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; outcome?: string });
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
    const store = await openSqliteStore({ dataDir: fixture.environment.TETHER_HOME! });
    try {
      const [session] = await store.loadSessions();
      expect(session?.state).toBe('closed');
    } finally {
      await store.close();
    }
  });

  it('passes the caller environment through: bypass mode works with IS_SANDBOX=1', async () => {
    fixture.api.enqueue(toolUseReply('Bash', { command: 'echo sandboxed', description: 'echo' }), textReply('Done.'));
    const result = await tether(['run', '--permission-mode', 'bypass', 'Run it'], {
      environment: { ...fixture.environment, IS_SANDBOX: '1' },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Bash succeeded');
  });
});

describe('tether run and tool prompts', () => {
  const writeFile = { command: 'echo from-prompt > prompted.txt', description: 'Write a file' };

  it('--json with --answers -: prompts are printed as events and answered from stdin', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Written.'));
    const result = await tether(['run', '--json', '--answers', '-', 'Write it'], {
      onStdoutLine: (line, stdin) => {
        const event = JSON.parse(line) as { type: string; interactionRef?: string };
        if (event.type === 'interaction.requested')
          stdin.write(`${JSON.stringify({ ref: event.interactionRef, answer: { decision: 'approve' } })}\n`);
        if (event.type === 'run.completed') stdin.end();
      },
    });
    expect(result.code).toBe(0);
    const types = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(types).toContain('interaction.requested');
    expect(types).toContain('interaction.settled');
    expect(readFileSync(path.join(fixture.root, 'workspace', 'prompted.txt'), 'utf8')).toBe('from-prompt\n');
  });

  it('--approve allow-once approves each prompt once, visibly', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Written.'));
    const result = await tether(['run', '--approve', 'allow-once', 'Write it']);
    expect(result.code).toBe(0);
    // Said with what it ran: stderr is the record of what was allowed.
    expect(result.stderr).toContain('allowing Bash once (--approve allow-once): echo from-prompt > prompted.txt');
    expect(existsSync(path.join(fixture.root, 'workspace', 'prompted.txt'))).toBe(true);
  });

  it('denies prompts when there is no terminal and no --answers, and says so', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Could not.'));
    const result = await tether(['run', 'Write it']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('tool prompts and questions will be denied');
    expect(existsSync(path.join(fixture.root, 'workspace', 'prompted.txt'))).toBe(false);
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')[1]!.view!.toolResults[0]).toMatchObject({
      isError: true,
    });
  });

  it('says nothing of how prompts would be answered above a refusal of the turn itself', async () => {
    for (const args of [
      ['run', '--cwd', path.join(fixture.root, 'no-such-folder'), 'Write it'],
      ['run', '--resume', `ses_${'0'.repeat(32)}`, 'Write it'],
    ]) {
      const refused = await tether(args);
      expect(refused.code, refused.stderr).not.toBe(0);
      expect(refused.stderr).toMatch(/invalid_workspace|session_not_found/);
      expect(refused.stderr).not.toContain('no terminal to ask at');
    }
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(0);
  });

  it('--approve deny in-process: told once, each prompt denied, and the model hears the user chose it', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Went on without it.'));
    const result = await tether(['run', '--approve', 'deny', 'Write it']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('tether: --approve deny: tool prompts and questions will be denied.\n');
    const turns = fixture.api.requests.filter((request) => request.kind === 'turn');
    expect(JSON.stringify(turns.at(-1)!.body)).toContain(
      'The user chose to deny every prompt of this run (--approve deny), so this was not permitted.',
    );
    expect(existsSync(path.join(fixture.root, 'workspace', 'prompted.txt'))).toBe(false);
  });

  it('refuses --answers together with --approve deny as a usage error', async () => {
    const result = await tether(['run', '--approve', 'deny', '--answers', '-', 'x']);
    expect(result.code).toBe(2);
  });
});

describe('tether demo and doctor', () => {
  it('runs the demo through the real claude binary with no credentials', async () => {
    const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...withoutCredentials } = fixture.environment;
    const result = await tether(['demo', '--json'], { environment: withoutCredentials });
    expect(result.code).toBe(0);
    const events = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; status?: string; toolName?: string; outcome?: string });
    expect(events.filter((event) => event.type === 'run.completed').map((event) => event.outcome)).toEqual([
      'succeeded',
      'succeeded',
    ]);
    expect(
      events.filter((event) => event.type === 'run.tool_activity').map((event) => `${event.toolName} ${event.status}`),
    ).toEqual(['Read invoked', 'Read succeeded']);
  });

  it('runs the same demo through the Agent SDK transport with the same events', async () => {
    const { ANTHROPIC_API_KEY: _key, ANTHROPIC_BASE_URL: _url, ...withoutCredentials } = fixture.environment;
    const [cli, sdk] = await Promise.all([
      tether(['demo', '--json'], { environment: withoutCredentials }),
      tether(['demo', '--json', '--transport', 'sdk'], { environment: withoutCredentials }),
    ]);
    expect([cli.code, sdk.code]).toEqual([0, 0]);
    const allTypes = (stdout: string) =>
      stdout
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { type: string }).type);
    // The agent's own reports (plan limits, context) land whenever it sends them: compared as a set.
    const reports = new Set(['session.limits_changed', 'session.context_measured']);
    const reported = (stdout: string) => new Set(allTypes(stdout).filter((type) => reports.has(type)));
    expect(reported(sdk.stdout)).toEqual(reported(cli.stdout));
    // The rest in order, consecutive deltas as one: how finely the text was chunked is the fake model's timing.
    const types = (stdout: string) =>
      allTypes(stdout)
        .filter((type) => !reports.has(type))
        .filter((type, index, all) => !(type.endsWith('_delta') && all[index - 1] === type));
    expect(types(sdk.stdout)).toEqual(types(cli.stdout));
    expect(types(sdk.stdout)).toContain('run.tool_activity');
  });

  it('doctor reports the binary, its version and the data dir', async () => {
    const result = await tether(['doctor', '--json']);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { name: string; detail: string }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.find((check) => check.name === 'claude')?.detail).toContain('2.1.332');
    const throughSdk = JSON.parse((await tether(['doctor', '--json', '--transport', 'sdk'])).stdout) as {
      checks: { name: string; detail: string }[];
    };
    expect(throughSdk.checks.find((check) => check.name === 'claude')?.detail).toContain(
      'driven through @anthropic-ai/claude-agent-sdk 0.3.332',
    );
    expect(report.checks.find((check) => check.name === 'data dir')?.detail).toContain(fixture.environment.TETHER_HOME);
    // The fake API the environment points at takes connections.
    expect(report.checks.find((check) => check.name === 'endpoint')).toMatchObject({ ok: true });
  });

  it('doctor fails an ANTHROPIC_BASE_URL that cannot be reached, or is no URL, before any turn retries for minutes', async () => {
    for (const [value, said] of [
      ['http://127.0.0.1:1', 'cannot be reached (ECONNREFUSED)'],
      ['notaurl', 'is not a URL'],
    ] as const) {
      const result = await tether(['doctor', '--json'], {
        environment: { ...fixture.environment, ANTHROPIC_BASE_URL: value },
      });
      expect(result.code, value).toBe(1);
      const report = JSON.parse(result.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
      expect(report.checks.find((check) => check.name === 'endpoint')).toMatchObject({ ok: false });
      expect(report.checks.find((check) => check.name === 'endpoint')?.detail).toContain(said);
    }
  });

  it('doctor fails a data dir that every other command refuses: writable by others, or owned by another user', async () => {
    const dataDir = fixture.environment.TETHER_HOME!;
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o777);
    const open = await tether(['doctor', '--json']);
    expect(open.code).toBe(1);
    const openRow = (
      JSON.parse(open.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }
    ).checks.find((check) => check.name === 'data dir');
    expect(openRow).toMatchObject({
      ok: false,
      detail: expect.stringContaining('is writable by other users (mode 0777)'),
    });
    expect((await tether(['sessions'])).stderr).toContain('is writable by other users (mode 0777)');

    chmodSync(dataDir, 0o700);
    chownSync(dataDir, 65534, 65534);
    try {
      const foreign = await tether(['doctor']);
      expect(foreign.code).toBe(1);
      expect(foreign.stdout).toContain(`✗ data dir     The data directory ${dataDir} is owned by uid 65534`);
    } finally {
      chownSync(dataDir, process.getuid!(), process.getgid!());
    }
  });

  it('doctor fails a data dir whose database a newer Tether wrote, as every command that opens it refuses it', async () => {
    const dataDir = fixture.environment.TETHER_HOME!;
    await (await openSqliteStore({ dataDir })).close();
    const database = new DatabaseSync(path.join(dataDir, 'tether.db'));
    database.exec(
      "INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from a later Tether', '2027-01-01')",
    );
    database.close();
    const report = await tether(['doctor', '--json']);
    expect(report.code).toBe(1);
    const row = (JSON.parse(report.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find(
      (check) => check.name === 'data dir',
    );
    expect(row).toMatchObject({ ok: false, detail: expect.stringContaining('has schema version 999') });
    expect((await tether(['sessions'])).stderr).toContain('has schema version 999');
  });

  it('doctor names the process holding the data dir', async () => {
    const store = await openSqliteStore({ dataDir: fixture.environment.TETHER_HOME! });
    try {
      const report = JSON.parse((await tether(['doctor', '--json'])).stdout) as {
        checks: { name: string; detail: string }[];
      };
      expect(report.checks.find((check) => check.name === 'data dir')?.detail).toBe(
        `${fixture.environment.TETHER_HOME} (in use by process ${process.pid})`,
      );
    } finally {
      await store.close();
    }
  });

  it('doctor shows the supported window for the CLI and the Agent SDK, and names a too-old claude with how to update it', async () => {
    const report = JSON.parse((await tether(['doctor', '--json'])).stdout) as {
      checks: { name: string; ok: boolean; detail: string; fix?: string }[];
    };
    expect(report.checks.find((check) => check.name === 'supported')?.detail).toBe(
      'claude CLI 2.1.332 or newer (tested: 2.1.332); Agent SDK (--transport sdk) @anthropic-ai/claude-agent-sdk >=0.3.332 <0.4 (tested: 0.3.332)',
    );
    const old = path.join(fixture.root, 'old-claude');
    await writeFile(old, "#!/bin/sh\necho '2.0.5 (Claude Code)'\n");
    await chmod(old, 0o755);
    const result = await tether(['doctor', '--json', '--claude-path', old]);
    expect(result.code).toBe(1);
    const claude = (JSON.parse(result.stdout) as typeof report).checks.find((check) => check.name === 'claude');
    expect(claude).toMatchObject({ ok: false, fix: expect.stringContaining('claude update') });
    expect(claude?.detail).toContain('version 2.0.5; Tether needs 2.1.332 or newer');
  });

  it('doctor warns of a --claude-path that answers --version but not as Claude Code, and words a missing one for the option', async () => {
    const notClaude = await tether(['doctor', '--json', '--claude-path', '/bin/true']);
    type Report = { checks: { name: string; ok: boolean; warning?: boolean; detail: string; fix?: string }[] };
    const row = (JSON.parse(notClaude.stdout) as Report).checks.find((check) => check.name === 'claude');
    expect(row).toMatchObject({
      ok: true,
      warning: true,
      detail: expect.stringContaining('does not name Claude Code'),
    });
    const missing = await tether(['doctor', '--json', '--claude-path', path.join(fixture.root, 'nowhere')]);
    const fix = (JSON.parse(missing.stdout) as Report).checks.find((check) => check.name === 'claude')?.fix;
    expect(fix).toContain('--claude-path');
    expect(fix).not.toContain('TETHER_CLAUDE_PATH');
  });
});
