import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ClaudeTransport, createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { type FakeCliStep, fakeClaudeCliPath, fakeCliScript, fakeCliTurn } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';

// Faults the real binary does not produce on demand, driven through the real provider code with
// a scripted stand-in for the claude executable.

let root: string;
let runtime: AgentRuntime | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-fake-cli-'));
});

afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
  await rm(root, { recursive: true, force: true });
});

async function runWith(
  transport: ClaudeTransport,
  turns: FakeCliStep[][],
  options: { claudePath?: string; extra?: Record<string, string> } = {},
) {
  const environment = {
    PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
    HOME: root,
    ...fakeCliScript(turns),
    ...options.extra,
  };
  runtime = await createAgentRuntime({
    providers: [
      createClaudeProvider({ transport, claudePath: options.claudePath ?? fakeClaudeCliPath(), environment }),
    ],
  });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
  return { runtime, sessionId };
}

async function turn(current: AgentRuntime, sessionId: string, text = 'hello') {
  const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  return current.waitForRun(runId);
}

describe.each(transports)('the Claude provider under faults (scripted fake CLI) [%s transport]', (transport) => {
  it(
    transport === 'cli'
      ? 'tolerates junk, ANSI and blank lines on stdout, recording one diagnostic'
      : 'tolerates junk, ANSI and blank lines on stdout (the SDK drops them itself: no diagnostic)',
    async () => {
      const steps = fakeCliTurn('fine');
      // Tether's decoder strips an ANSI sequence in front of a JSON line and keeps the line; the SDK
      // drops such a line whole (it would lose the turn's init here), so its junk stands on lines of its own.
      const junk = transport === 'cli' ? 'Loading…\n\n\u001b[2K' : 'Loading…\n\n\u001b[2K\n';
      const { runtime: current, sessionId } = await runWith(transport, [
        [{ raw: junk }, ...steps.slice(0, 2), { raw: 'not json either\n' }, ...steps.slice(2)],
      ]);
      expect((await turn(current, sessionId)).outcome).toBe('succeeded');
      const events = await current.readEvents(sessionId);
      expect(
        events.filter((event) => event.type === 'diagnostic' && event.code === 'claude.stdout_not_json'),
      ).toHaveLength(transport === 'cli' ? 1 : 0);
      expect(
        events.filter((event) => event.type === 'run.message_delta').map((event) => (event as { text: string }).text),
      ).toEqual(['fine']);
    },
  );

  it('fails with provider_contract_violation when the CLI exits 0 without a result', async () => {
    const { runtime: current, sessionId } = await runWith(transport, [
      [...fakeCliTurn('partial').slice(0, 3), { exit: 0 }],
    ]);
    expect(await turn(current, sessionId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_contract_violation' },
    });
  });

  it('fails with provider_crashed on a non-zero exit before the result', async () => {
    const { runtime: current, sessionId } = await runWith(transport, [[...fakeCliTurn('x').slice(0, 2), { exit: 3 }]]);
    expect(await turn(current, sessionId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { exitCode: 3 } },
    });
  });

  it('fails with provider_crashed when the CLI dies by a signal mid-turn', async () => {
    const { runtime: current, sessionId } = await runWith(transport, [
      [...fakeCliTurn('y').slice(0, 2), { kill: 'SIGKILL' }],
    ]);
    expect(await turn(current, sessionId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { signal: 'SIGKILL' } },
    });
  });

  it('resends a turn the CLI never acknowledged once to a new process, then fails if that dies too', async () => {
    const argvFile = path.join(root, 'argv.ndjson');
    // Each process gets the whole script again: its first user line exits silently.
    const { runtime: current, sessionId } = await runWith(transport, [[{ exit: 1 }]], {
      extra: { TETHER_FAKE_CLI_ARGV_FILE: argvFile },
    });
    expect(await turn(current, sessionId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { exitCode: 1 } },
    });
    const launches = (await readFile(argvFile, 'utf8')).trim().split('\n');
    expect(launches).toHaveLength(2);
  });

  it('names the binary when it cannot be started (spawn failure)', async () => {
    const broken = path.join(root, 'claude');
    await writeFile(broken, '#!/nonexistent/interpreter\n');
    await chmod(broken, 0o755);
    const { runtime: current, sessionId } = await runWith(transport, [], { claudePath: broken });
    const run = await turn(current, sessionId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_unavailable', details: { binaryPath: broken } },
    });
    expect(run.error?.message).toContain(broken);
  });

  it('explains an environment too large for the kernel (E2BIG at spawn) instead of failing as an internal error', async () => {
    const { runtime: current, sessionId } = await runWith(transport, [fakeCliTurn('never')], {
      extra: { TETHER_HUGE_VARIABLE: 'x'.repeat(200 * 1024) },
    });
    const run = await turn(current, sessionId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_unavailable', details: { reason: 'spawn_failed', systemErrorCode: 'E2BIG' } },
    });
    expect(run.error?.message).toContain('environment');
    // The session is not left holding the run or a process slot: the next turn is taken (and fails the same way).
    expect(await turn(current, sessionId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_unavailable' },
    });
  });

  it('uses --session-id for a new conversation and --resume once it is established', async () => {
    const argvFile = path.join(root, 'argv.ndjson');
    const { runtime: current, sessionId } = await runWith(transport, [fakeCliTurn('one'), [{ exit: 0 }]], {
      extra: { TETHER_FAKE_CLI_ARGV_FILE: argvFile },
    });
    expect((await turn(current, sessionId)).outcome).toBe('succeeded');
    const providerSessionId = (await current.getSession(sessionId)).providerSessionId;
    await current.shutdown();
    runtime = undefined;
    const launches = (await readFile(argvFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string[]);
    // The cli transport passes `--session-id ID`, the Agent SDK `--session-id=ID`.
    const flags = launches[0]!.join(' ');
    expect(flags).toMatch(new RegExp(`--session-id[ =]${providerSessionId}`));
    expect(flags).not.toContain('--resume');
  });
});
