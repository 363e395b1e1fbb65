import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ClaudeTransport, createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import {
  type FakeCliStep,
  agentErrorOf,
  fakeClaudeCliPath,
  fakeCliScript,
  fakeCliTurn,
  processesWithEnvironment,
  runEvents,
  waitForEvent,
} from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';

// Lifecycle endings the real binary only reaches through interrupts or crashes, driven with the
// scripted CLI: the CLI withdrawing a prompt, a turn ending with a prompt open, a runtime dying.

const tetherBin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../packages/cli/bin/tether.js');
let root: string;
let runtime: AgentRuntime | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-lifecycle-'));
});

afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
  await rm(root, { recursive: true, force: true });
});

const prompt = (requestId: string): FakeCliStep => ({
  line: {
    type: 'control_request',
    request_id: requestId,
    request: {
      subtype: 'can_use_tool',
      tool_name: 'Bash',
      input: { command: 'rm -rf /tmp/x' },
      tool_use_id: `toolu_${requestId}`,
    },
  },
});

function environment(turns: FakeCliStep[][]): Record<string, string> {
  return {
    PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
    HOME: root,
    ...fakeCliScript(turns),
  };
}

async function open(turns: FakeCliStep[][], transport: ClaudeTransport = 'cli') {
  runtime = await createAgentRuntime({
    providers: [createClaudeProvider({ transport, claudePath: fakeClaudeCliPath(), environment: environment(turns) })],
  });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
  return { runtime, sessionId };
}

describe.each(transports)('interaction endings (scripted CLI) [%s transport]', (transport) => {
  it('withdraws a prompt the CLI cancels; a late answer is refused', async () => {
    const [init, ...rest] = fakeCliTurn('after');
    const { runtime: current, sessionId } = await open(
      [[init!, prompt('r1'), { line: { type: 'control_cancel_request', request_id: 'r1' } }, ...rest]],
      transport,
    );
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const events = await runEvents(current, sessionId, runId);
    const requested = events.find((event) => event.type === 'interaction.requested')!;
    expect(events.map((event) => event.type)).toContain('interaction.withdrawn');
    const late = await agentErrorOf(
      current.respondInteraction({
        sessionId,
        interactionRef: (requested as { interactionRef: string }).interactionRef,
        answer: { decision: 'approve' },
      }),
    );
    expect(late.code).toBe('interaction_already_settled');
  });

  it('cancels a prompt still open when its run ends, right before run.completed', async () => {
    const [init, ...rest] = fakeCliTurn('ended');
    const { runtime: current, sessionId } = await open([[init!, prompt('r2'), ...rest]], transport);
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const types = (await runEvents(current, sessionId, runId)).map((event) => event.type);
    expect(types.slice(-2)).toEqual(['interaction.cancelled', 'run.completed']);
    expect((await current.getSession(sessionId)).pendingInteractions).toEqual([]);
  });

  const [init, streaming] = fakeCliTurn('never');
  it.each([
    // The CLI closes its stdin, then raises a prompt, and lives on: the answer's write is sure to fail.
    ['an answer the agent can no longer take (its stdin closed)', [init!, { closeStdin: true }, prompt('r4')]],
    // The streaming turn makes the host ask for plan limits (get_usage) after the close: that write fails
    // first, and the Agent SDK then drops every later write, the answer's included (it must not read as settled).
    [
      'an answer after an earlier write to the closed stdin failed',
      [init!, { closeStdin: true }, streaming!, prompt('r5')],
    ],
  ] satisfies [string, FakeCliStep[]][])('%s: send_failed, and the run still ends', async (_name, steps) => {
    const { runtime: current, sessionId } = await open([steps], transport);
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    const requested = await waitForEvent(current, sessionId, 'interaction.requested');
    const receipt = await current.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve' },
    });
    expect(receipt).toMatchObject({ status: 'send_failed' });
    const run = await current.waitForRun(runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { reason: 'stdin_closed' } },
    });
    const events = await current.readEvents(sessionId);
    expect(events.filter((event) => event.type.startsWith('interaction.')).map((event) => event.type)).toEqual([
      'interaction.requested',
      'interaction.send_failed',
    ]);
    const started = events.find((event) => event.type === 'session.process_started') as { marker: string };
    expect(processesWithEnvironment('TETHER_PROCESS_MARKER', started.marker)).toEqual([]);
  });
});

describe('interaction endings across a runtime restart (scripted CLI)', () => {
  it('a restarted runtime shows the prompts of a dead runtime cancelled, not pending', async () => {
    const dataDir = path.join(root, 'data');
    const [init] = fakeCliTurn('never');
    const child = spawn(
      process.execPath,
      [tetherBin, 'run', '--json', '--answers', '-', '--data-dir', dataDir, '--cwd', root, 'go'],
      {
        env: { ...environment([[init!, prompt('r3')]]), TETHER_CLAUDE_PATH: fakeClaudeCliPath() },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    await new Promise<void>((resolve) => {
      let buffer = '';
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        buffer += chunk;
        if (buffer.includes('"interaction.requested"')) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));

    runtime = await createAgentRuntime({
      providers: [createClaudeProvider({ claudePath: fakeClaudeCliPath(), environment: environment([]) })],
      store: await openSqliteStore({ dataDir }),
    });
    const [session] = await runtime.listSessions();
    expect(session).toMatchObject({ state: 'idle', pendingInteractions: [] });
    const events = await runtime.readEvents(session!.sessionId);
    expect(
      events
        .map((event) => event.type)
        .filter((type) => type !== 'session.process_stopped')
        .slice(-2),
    ).toEqual(['interaction.cancelled', 'run.completed']);
    expect(events.find((event) => event.type === 'interaction.cancelled')).toMatchObject({
      reason: 'runtime_restarted',
    });
  });
});
