import { readdirSync } from 'node:fs';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { AgentRuntime } from '@tether/runtime';
import type { ClaudeTestEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { pollUntil } from '@tether/provider-claude/test-support';
import { expectNothingLeft, sandboxPerTest, waitForToolProcesses } from './supervision-helpers.js';

const sandbox = sandboxPerTest();

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

/** Open a session, run one turn whose tool backgrounds a process, close it: nothing may stay. */
async function cycle(environment: ClaudeTestEnvironment, runtime: AgentRuntime): Promise<void> {
  environment.api.enqueue(
    toolUseReply('Bash', { command: 'tail -f /dev/null > /dev/null 2>&1 &', description: 'Background' }),
    textReply('Done.'),
  );
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: environment.workspace },
    permissionMode: 'bypass',
  });
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
  expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
  await waitForToolProcesses(environment, 1);
  await runtime.closeSession({ sessionId });
  await expectNothingLeft(environment);
}

describe.runIf(process.platform === 'linux')('resources across sessions', () => {
  it('keeps the open file descriptors of this process flat across 12 open/turn/close cycles (the soak), leaving no claude process behind', async () => {
    const environment = await sandbox();
    const runtime = await environment.runtime();
    // One cycle first: the first one opens what stays open for good (the store, the API's listener).
    await cycle(environment, runtime);
    const baseline = openDescriptors();
    // Twelve: a descriptor kept per cycle shows as twelve; more cycles only took the test near its
    // time limit on a slow machine (2.3 s a cycle there, each a cold claude).
    for (let index = 0; index < 12; index += 1) await cycle(environment, runtime);
    // Sockets of exited children close asynchronously: wait (bounded) for the count to settle.
    await pollUntil(() => openDescriptors() <= baseline, { timeoutMs: 5_000 });
    expect(openDescriptors()).toBeLessThanOrEqual(baseline);
  });
});
