import { chmod, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CLAUDE_CLI_MINIMUM_VERSION } from '@tether/provider-claude';
import { readProcessCommandLine, snapshotDescendants } from '@tether/provider-claude/test-support';
import {
  type FakeCliStep,
  agentErrorOf,
  answerText,
  fakeClaudeCliPath,
  fakeCliControls,
  fakeCliScript,
  fakeCliTurn,
  processesWithEnvironment,
  runEvents,
} from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';
import { useFakeRuntime } from './fake-runtime-harness.js';

// Agents that never get going: one that starts and never writes a frame (the start-up watchdog),
// one that never stamps its frames with the input they belong to (the default correlation), one
// older than the supported floor (refused: the agent started beside the version check is stopped
// unreported), and one that refuses its launch configuration (bypass as root).

const harness = useFakeRuntime('tether-startup-');

/** The frames of an ordinary turn as a CLI that never stamps writes them. */
function unstampedTurn(text: string): FakeCliStep[] {
  return fakeCliTurn(text).map((step) => {
    if (!('line' in step)) return step;
    const { user_message_uuid: _one, user_message_uuids: _many, ...line } = step.line as Record<string, unknown>;
    return { line };
  });
}

/** A claude that reports `version` and otherwise behaves as the scripted fake CLI. */
/** The result the claude CLI writes when it refuses bypass mode as root, just before it exits (CLI 2.1.332, unstamped). */
const bypassRootRefusal: FakeCliStep = {
  line: {
    type: 'result',
    subtype: 'error_during_execution',
    is_error: true,
    num_turns: 0,
    stop_reason: null,
    session_id: '$SESSION',
    errors: ['--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons'],
    startup_failure_reason: 'bypass_root',
  },
};

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
    const { runtime: current, sessionId } = await harness.open(
      transport,
      [[{ raw: '2.1.332 (Claude Code)\n' }, { hang: path.join(harness.root, 'hung-once') }, ...fakeCliTurn('back')]],
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
    const { runtime: current, sessionId } = await harness.open(transport, [
      unstampedTurn('lost'),
      unstampedTurn('lost again'),
    ]);
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
    const { runtime: current, sessionId } = await harness.open(transport, [unstampedTurn('by position')], {
      correlation: 'legacy-unstamped',
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    expect(answerText(await runEvents(current, sessionId, runId))).toBe('by position');
  });

  /**
   * A session whose first turn the agent refuses as bypass as root. The refused agent has written its
   * refusal and is still exiting (here it only goes at EOF, so the window stays open); a request that
   * reached it would end it, as the real CLI's exit does.
   */
  async function refusedSession() {
    const { runtime: current, sessionId } = await harness.start({
      transport,
      environment: {
        PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
        HOME: harness.root,
        ...fakeCliScript([[bypassRootRefusal]]),
        ...fakeCliControls({
          set_permission_mode: { before: [{ exit: 1 }] },
          set_model: { before: [{ exit: 1 }] },
          get_context_usage: { before: [bypassRootRefusal, { exit: 1 }] },
        }),
      },
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'hello' }] });
    const run = await current.waitForRun(runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_configuration_refused', details: { reason: 'bypass_root' } },
    });
    const processesStarted = async () =>
      (await current.readEvents(sessionId)).filter((event) => event.type === 'session.process_started').length;
    return { current, sessionId, refusal: run.error!, processesStarted };
  }

  it('right after a start refused as root, a model or mode change applies to the next launch (resolves with it), never a crash of the exiting agent', async () => {
    const { current, sessionId } = await refusedSession();
    expect(await current.setModel({ sessionId, model: 'sonnet' })).toMatchObject({ model: 'sonnet' });
    expect(await current.setPermissionMode({ sessionId, mode: 'ask_before_edit' })).toMatchObject({
      mode: 'ask_before_edit',
    });
    expect(await current.getSession(sessionId)).toMatchObject({ model: 'sonnet', permissionMode: 'ask_before_edit' });
  });

  it('after a start refused as root, context usage gets that refusal: at once while nothing changed, from the next launch after a change', async () => {
    const { current, sessionId, refusal, processesStarted } = await refusedSession();
    // Nothing changed since the refusal: the same refusal, and no agent started to be refused again.
    expect((await agentErrorOf(current.getContextUsage({ sessionId }))).toObject()).toEqual(refusal);
    expect(await processesStarted()).toBe(1);
    expect(await current.setModel({ sessionId, model: 'sonnet' })).toMatchObject({ model: 'sonnet' });
    // A launch with the new model is refused too: the read says so, not that the agent exited.
    expect(await agentErrorOf(current.getContextUsage({ sessionId }))).toMatchObject({
      code: 'provider_configuration_refused',
      details: { reason: 'bypass_root' },
      message: refusal.message,
    });
    expect(await processesStarted()).toBe(2);
  });

  it('a run on a CLI older than the floor fails provider_unavailable (cli_too_old), reports no process and leaves none; after an update the next turn runs', async () => {
    const binary = path.join(harness.root, 'claude');
    await claudeReporting(binary, '2.0.5');
    const { runtime: current, sessionId } = await harness.open(transport, [fakeCliTurn('updated')], {
      claudePath: binary,
    });
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
    const agents = snapshotDescendants(process.pid).filter(({ pid }) =>
      readProcessCommandLine(pid)?.includes(fakeClaudeCliPath()),
    );
    expect(agents).toEqual([]);

    await claudeReporting(binary, CLAUDE_CLI_MINIMUM_VERSION);
    const second = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect(answerText(await runEvents(current, sessionId, second.runId))).toBe('updated');
  });
});
