import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  CLAUDE_CLI_MINIMUM_VERSION,
  type ClaudeProviderSettings,
  type ClaudeTransport,
  createClaudeProvider,
} from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import {
  type FakeCliStep,
  answerText,
  fakeClaudeCliPath,
  fakeCliScript,
  fakeCliTurn,
  processesWithEnvironment,
  runEvents,
} from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';

// Agents that never get going: one that starts and never writes a frame (the start-up watchdog),
// one that never stamps its frames with the input they belong to (the default correlation), and one
// older than the supported floor (refused before anything is started).

let root: string;
let runtime: AgentRuntime | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-startup-'));
});

afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
  await rm(root, { recursive: true, force: true });
});

async function open(transport: ClaudeTransport, turns: FakeCliStep[][], provider: ClaudeProviderSettings = {}) {
  const environment = {
    PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
    HOME: root,
    ...fakeCliScript(turns),
  };
  runtime = await createAgentRuntime({
    providers: [createClaudeProvider({ transport, claudePath: fakeClaudeCliPath(), environment, ...provider })],
  });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
  return { runtime, sessionId };
}

/** The frames of an ordinary turn as a CLI that never stamps writes them. */
function unstampedTurn(text: string): FakeCliStep[] {
  return fakeCliTurn(text).map((step) => {
    if (!('line' in step)) return step;
    const { user_message_uuid: _one, user_message_uuids: _many, ...line } = step.line as Record<string, unknown>;
    return { line };
  });
}

/** A claude that reports `version` and otherwise behaves as the scripted fake CLI. */
async function claudeReporting(binary: string, version: string): Promise<void> {
  await writeFile(
    binary,
    `#!/bin/sh\nif [ "$1" = "--version" ]; then echo '${version} (Claude Code)'; exit 0; fi\nexec '${process.execPath}' '${fakeClaudeCliPath()}' "$@"\n`,
  );
  await chmod(binary, 0o755);
}

describe.each(transports)('agents that never get going (scripted fake CLI) [%s transport]', (transport) => {
  it('a CLI that prints its version and then writes no frame fails provider_stalled (phase startup) within startupTimeoutMs, is killed, and the next turn works', async () => {
    const startupTimeoutMs = 600;
    // The first process hangs; the next one (same script) goes on with an ordinary turn.
    const { runtime: current, sessionId } = await open(
      transport,
      [[{ raw: '2.1.332 (Claude Code)\n' }, { hang: path.join(root, 'hung-once') }, ...fakeCliTurn('back')]],
      { startupTimeoutMs },
    );
    const began = Date.now();
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    const run = await current.waitForRun(runId);
    const elapsed = Date.now() - began;
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_stalled', details: { phase: 'startup', reason: 'no_first_frame' } },
    });
    expect(run.error?.message).toContain('--startup-timeout');
    expect(elapsed).toBeGreaterThanOrEqual(startupTimeoutMs);
    // The fake CLI dies at SIGTERM: well inside the first escalation step.
    expect(elapsed).toBeLessThan(startupTimeoutMs + 3_000);
    const events = await current.readEvents(sessionId);
    const started = events.find((event) => event.type === 'session.process_started');
    expect(started).toBeDefined();
    expect(processesWithEnvironment('TETHER_PROCESS_MARKER', (started as { marker: string }).marker)).toEqual([]);
    expect(
      events.filter((event) => event.type === 'diagnostic' && event.code === 'claude.startup_timeout'),
    ).toHaveLength(1);
    const next = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect(answerText(await runEvents(current, sessionId, next.runId))).toBe('back');
  });

  it('a CLI that never stamps its frames fails each run with provider_contract_violation naming the fix, reported once, instead of hanging', async () => {
    const { runtime: current, sessionId } = await open(transport, [unstampedTurn('lost'), unstampedTurn('lost again')]);
    for (const text of ['hello', 'again']) {
      const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text }] });
      const run = await current.waitForRun(runId);
      expect(run).toMatchObject({
        outcome: 'failed',
        error: { code: 'provider_contract_violation', details: { reason: 'frames_unstamped' } },
      });
      expect(run.error?.message).toContain('legacy-unstamped');
    }
    const events = await current.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'diagnostic' && event.code === 'claude.frames_unstamped')).toEqual([
      expect.objectContaining({ level: 'warning' }),
    ]);
    expect(events.some((event) => event.type === 'run.message_delta')).toBe(false);
  });

  it('the same CLI works under correlation legacy-unstamped', async () => {
    const { runtime: current, sessionId } = await open(transport, [unstampedTurn('by position')], {
      correlation: 'legacy-unstamped',
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    expect(answerText(await runEvents(current, sessionId, runId))).toBe('by position');
  });

  it('a run on a CLI older than the floor fails provider_unavailable (cli_too_old) and starts nothing; after an update the next turn runs', async () => {
    const binary = path.join(root, 'claude');
    await claudeReporting(binary, '2.0.5');
    const { runtime: current, sessionId } = await open(transport, [fakeCliTurn('updated')], { claudePath: binary });
    const first = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    const run = await current.waitForRun(first.runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: {
        code: 'provider_unavailable',
        details: {
          reason: 'cli_too_old',
          binaryPath: binary,
          installedVersion: '2.0.5',
          minimumVersion: CLAUDE_CLI_MINIMUM_VERSION,
        },
      },
    });
    expect(run.error?.message).toContain('claude update');
    expect((await current.readEvents(sessionId)).some((event) => event.type === 'session.process_started')).toBe(false);

    await claudeReporting(binary, CLAUDE_CLI_MINIMUM_VERSION);
    const second = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect(answerText(await runEvents(current, sessionId, second.runId))).toBe('updated');
  });
});
