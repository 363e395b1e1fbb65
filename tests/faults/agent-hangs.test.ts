import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { pollUntil, readProcessCommandLine } from '@tether/provider-claude/test-support';
import { answerText, processesWithEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from '../conformance/conformance-harness.js';

// A claude that hangs (SIGSTOP: alive, reading nothing, answering nothing) in the middle of its
// work: whatever waits on it is bounded, the run ends with a stable outcome, the process group is
// gone, and the session's next turn works on a new process.

describeTransports('a hung claude', ({ start }) => {
  it('stopped while its tool runs: interrupt_run kills it once the stop goes unanswered, the run ends interrupted, the next turn works', async () => {
    const environment = await start({ sandbox: true });
    environment.api.enqueue(
      // Not `sleep 30`: the CLI refuses a standalone sleep at once and asks for the next reply.
      toolUseReply('Bash', { command: 'tail -f /dev/null', description: 'Wait' }),
      textReply('Next.'),
    );
    const runtime = await environment.runtime({ provider: { interruptTimeoutMs: 1_000 } });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      permissionMode: 'bypass',
    });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Wait.' }] });
    const { pid } = await waitForEvent(runtime, sessionId, 'session.process_started');
    await waitForEvent(runtime, sessionId, 'run.tool_activity');
    // Stopped once the tool's command runs, so its end is part of what is checked.
    const toolRuns = () =>
      processesWithEnvironment('HOME', environment.home).some(
        (other) => readProcessCommandLine(other)?.join(' ') === 'tail -f /dev/null',
      );
    expect(await pollUntil(toolRuns, { timeoutMs: 10_000 })).toBe(true);
    process.kill(pid, 'SIGSTOP');

    // The tool never finishes for a stopped claude and no API call is outstanding: only the stop can end the run.
    await runtime.interruptRun({ sessionId, runId });
    const run = await runtime.waitForRun(runId);
    expect(run.outcome).toBe('interrupted');
    // The tool was still running: the stopped claude never asked for the reply after it.
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);
    const events = await runtime.readEvents(sessionId);
    expect(events).toContainEqual(
      expect.objectContaining({ type: 'diagnostic', code: 'claude.interrupt_unanswered', runId }),
    );
    // Killed, not waited for: its end follows the run's.
    expect(await waitForEvent(runtime, sessionId, 'session.process_stopped')).toMatchObject({ reason: 'released' });
    // claude, and its tool's command (in a process group of its own) by the sweep that follows claude's exit.
    await pollUntil(() => processesWithEnvironment('HOME', environment.home).length === 0, { timeoutMs: 5_000 });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);

    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Next.');
  });

  it('killed while its stop is out: the stop gets its receipt, the run ends failed provider_crashed, the next turn works', async () => {
    const environment = await start();
    environment.api.enqueue(holdReply(), textReply('Next.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Wait.' }] });
    const { pid } = await waitForEvent(runtime, sessionId, 'session.process_started');
    await environment.api.waitForRequests(1, { kind: 'turn' });
    // Stopped first, so the stop is surely still unanswered when the process dies.
    process.kill(pid, 'SIGSTOP');
    const receipt = runtime.interruptRun({ sessionId, runId });
    await waitForEvent(runtime, sessionId, 'run.interrupt_requested');
    process.kill(pid, 'SIGKILL');
    // The run is over (the process ended it), so the stop has nothing left to do: a receipt, not "the CLI refused".
    await expect(receipt).resolves.toMatchObject({ type: 'interrupt_run', runId });
    expect(await runtime.waitForRun(runId)).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { signal: 'SIGKILL' } },
    });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Next.');
  });
});
