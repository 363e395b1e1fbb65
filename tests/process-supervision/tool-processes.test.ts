import { getPriority } from 'node:os';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { autogroupNiceOf } from '@tether/provider-claude/test-support';
import type { AgentRuntime } from '@tether/runtime';
import {
  type ClaudeTestEnvironment,
  answerText,
  processesWithEnvironment,
  runEvents,
  waitForEvent,
} from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import {
  claudeProcesses,
  commandOf,
  detachingCommand,
  expectNothingLeft,
  markerOf,
  waitForToolProcesses,
  sandboxPerTest,
} from './supervision-helpers.js';

/**
 * With the real claude binary: what a Bash tool starts never outlives the session's process,
 * however that process ends.
 */

const sandbox = sandboxPerTest();

async function bypassSession(): Promise<{
  environment: ClaudeTestEnvironment;
  runtime: AgentRuntime;
  sessionId: string;
}> {
  const environment = await sandbox();
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: environment.workspace },
    permissionMode: 'bypass',
  });
  return { environment, runtime, sessionId };
}

/** One turn whose Bash call backgrounds `command`; resolves once the run completed. */
async function runTool(
  environment: ClaudeTestEnvironment,
  runtime: AgentRuntime,
  sessionId: string,
  command: string,
): Promise<void> {
  environment.api.enqueue(
    toolUseReply('Bash', { command, description: 'Start background work' }),
    textReply('Started.'),
  );
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Start it.' }] });
  expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
}

describe.runIf(process.platform === 'linux')('tool processes through the real claude binary', () => {
  it('detached tool commands inherit the marker and are gone after closeSession', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    await runTool(environment, runtime, sessionId, detachingCommand);
    const tools = await waitForToolProcesses(environment, 3);
    const [claude] = claudeProcesses(environment);
    const marker = markerOf(claude!);
    expect(marker).toMatch(/^[0-9a-f]{32}$/);
    // nohup, setsid and a plain `&` each left the CLI's tree, and each still carries its marker.
    expect(tools.map(commandOf).sort()).toEqual(['sleep', 'sleep', 'tail']);
    for (const pid of tools) expect(markerOf(pid)).toBe(marker);

    await runtime.closeSession({ sessionId });
    await expectNothingLeft(environment);
  });

  it('a lone agent runs as the host; from a second one on, both and what their tools start run 10 nicer (agentNice), and as the host with agentNice 0', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    const hostGroup = autogroupNiceOf('self');
    environment.api.enqueue(textReply('Alone.'));
    const lone = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(await runtime.waitForRun(lone.runId)).toMatchObject({ outcome: 'succeeded' });
    const [first] = claudeProcesses(environment);
    expect(getPriority(first!)).toBe(getPriority());
    if (hostGroup !== undefined) expect(autogroupNiceOf(first!)).toBe(hostGroup);

    const second = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      permissionMode: 'bypass',
    });
    await runTool(environment, runtime, second.sessionId, detachingCommand);
    const tools = await waitForToolProcesses(environment, 3);
    const agents = claudeProcesses(environment);
    expect(agents).toHaveLength(2);
    const yielding = Math.min(19, getPriority() + 10);
    expect([...agents, ...tools].map((pid) => getPriority(pid))).toEqual(Array(5).fill(yielding));
    // Where the kernel schedules by session (autogroup), each agent's session yields as a whole too.
    if (hostGroup !== undefined)
      for (const agent of agents) expect(autogroupNiceOf(agent)).toBe(Math.min(19, hostGroup + 10));
    await runtime.closeSession({ sessionId });
    await runtime.closeSession({ sessionId: second.sessionId });
    await expectNothingLeft(environment);

    const asHost = await environment.runtime({ provider: { agentNice: 0 } });
    for (const text of ['One.', 'Two.']) {
      const opened = await asHost.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
        permissionMode: 'bypass',
      });
      environment.api.enqueue(textReply(text));
      const { runId } = await asHost.submitTurn({
        sessionId: opened.sessionId,
        input: [{ type: 'text', text: 'Hi.' }],
      });
      expect(await asHost.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    }
    const plain = claudeProcesses(environment);
    expect(plain).toHaveLength(2);
    expect(plain.map((pid) => getPriority(pid))).toEqual([getPriority(), getPriority()]);
  });

  it('closeSession while a tool runs (SIGTERM path) leaves nothing', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    environment.api.enqueue(
      toolUseReply('Bash', {
        command: '(setsid sleep 300 > /dev/null 2>&1 &); tail -f /dev/null',
        description: 'Block',
      }),
      textReply('Never.'),
    );
    await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Block.' }] });
    await waitForToolProcesses(environment, 1, (pid) => commandOf(pid) === 'tail');
    await runtime.closeSession({ sessionId });
    await expectNothingLeft(environment);
  });

  it('runtime.shutdown() leaves nothing', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    await runTool(environment, runtime, sessionId, detachingCommand);
    await waitForToolProcesses(environment, 3);
    await runtime.shutdown();
    await expectNothingLeft(environment);
  });

  it('a CLI SIGKILLed from outside while idle leaves nothing, and the next turn resumes in a new process', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    await runTool(environment, runtime, sessionId, detachingCommand);
    await waitForToolProcesses(environment, 3);
    const [claude] = claudeProcesses(environment);
    const marker = markerOf(claude!);
    process.kill(claude!, 'SIGKILL');
    // Nobody stops anything: the exit path sweeps.
    await expectNothingLeft(environment);

    environment.api.enqueue(textReply('Still here.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Are you there?' }] });
    expect(answerText(await runEvents(runtime, sessionId, runId))).toBe('Still here.');
    const [next] = claudeProcesses(environment);
    expect(next).toBeDefined();
    expect(markerOf(next!)).not.toBe(marker);
    expect(
      JSON.stringify(environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.body),
    ).toContain('Start it.');
  });

  it('a CLI SIGKILLed from outside mid-tool fails the run and leaves nothing', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'nohup sleep 300 > /dev/null 2>&1 & tail -f /dev/null', description: 'Block' }),
      textReply('Never.'),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Block.' }] });
    await waitForEvent(runtime, sessionId, 'run.tool_activity', {
      where: (event) => event.runId === runId && event.status === 'invoked',
    });
    await waitForToolProcesses(environment, 2);
    // Without the sweep, the bash wrapper and both commands would be orphaned here (CLI notes §11).
    process.kill(claudeProcesses(environment)[0]!, 'SIGKILL');
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'provider_crashed' } });
    await expectNothingLeft(environment);
  });

  it('a shutdown right after a CLI was SIGKILLed mid-tool returns only once what the tool started is gone', async () => {
    const { environment, runtime, sessionId } = await bypassSession();
    // The command ignores SIGTERM, so the sweep after the CLI's exit takes its grace before the SIGKILL.
    environment.api.enqueue(
      toolUseReply('Bash', { command: "trap '' TERM; tail -f /dev/null", description: 'Block' }),
      textReply('Never.'),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Block.' }] });
    await waitForToolProcesses(environment, 1, (pid) => commandOf(pid) === 'tail');
    process.kill(claudeProcesses(environment)[0]!, 'SIGKILL');
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'failed', error: { code: 'provider_crashed' } });
    await runtime.shutdown();
    // No waiting here: a host may exit as soon as shutdown returns, and the sweep would end with it.
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
