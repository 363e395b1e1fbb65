import { existsSync } from 'node:fs';
import path from 'node:path';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { methods, type RequestPermissionRequest, type RequestPermissionResponse } from '@tether/acp/test-support';
import { processesWithEnvironment, waitForEvent } from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import { useAcp } from './acp-harness.js';

describe('ACP session/cancel while the client is asked, while a tool runs, twice, and beside another session', () => {
  const startAcp = useAcp();

  it('during a permission request: cancelled, the tool never runs, its call ends failed; the answers after it (cancelled as ACP asks, then a late allow) change nothing', async () => {
    const asked: RequestPermissionRequest[] = [];
    const answers: ((response: RequestPermissionResponse) => void)[] = [];
    const { environment, runtime, pair } = await startAcp({
      onPermission: (request) => {
        asked.push(request);
        return new Promise((resolve) => answers.push(resolve));
      },
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'touch late.txt', description: 'Touch' }),
      textReply('Touched.'),
    );
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Touch it.');
    await waitForEvent(runtime, sessionId, 'interaction.requested');
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    answers[0]!({ outcome: { outcome: 'cancelled' } });
    expect(await answered).toEqual({ stopReason: 'cancelled' });
    answers[0]!({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    expect((await waitForEvent(runtime, sessionId, 'run.completed')).outcome).toBe('interrupted');
    expect(existsSync(path.join(environment.workspace, 'late.txt'))).toBe(false);
    const toolCallId = asked[0]!.toolCall.toolCallId;
    expect(
      pair.updatesOf(sessionId, 'tool_call_update').filter((update) => update.toolCallId === toolCallId),
    ).toMatchObject([{ status: 'failed' }]);
    // The session takes the next prompt; the call it was asked about is not asked again.
    environment.api.enqueue(textReply('Again.'));
    expect(await pair.prompt(sessionId, 'Next.')).toEqual({ stopReason: 'end_turn' });
    expect(asked).toHaveLength(1);
  });

  it('twice while an approved tool runs: cancelled once, the call ends failed, and no process is left', async () => {
    const { environment, runtime, pair } = await startAcp({
      onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }),
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'tail -f /dev/null', description: 'Wait' }),
      textReply('Waited.'),
    );
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Wait.');
    await vi.waitFor(
      () =>
        expect(pair.updatesOf(sessionId, 'tool_call_update').map((update) => update.status)).toContain('in_progress'),
      { timeout: 30_000 },
    );
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await answered).toEqual({ stopReason: 'cancelled' });
    expect(pair.updatesOf(sessionId, 'tool_call_update').at(-1)).toMatchObject({ status: 'failed' });
    expect((await runtime.getSession(sessionId)).lastRun?.outcome).toBe('interrupted');
    await pair.close();
    await runtime.shutdown();
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('sent right after the prompt, before its turn is known: cancelled; a prompt of another session goes on', async () => {
    const { environment, pair } = await startAcp();
    const one = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    const two = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    environment.api.enqueue(holdReply());
    const other = pair.agent.request(methods.agent.session.prompt, {
      sessionId: two.sessionId,
      prompt: [{ type: 'text', text: 'Take your time.' }],
    });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    environment.api.enqueue(textReply('Too late.'));
    const cancelled = pair.agent.request(methods.agent.session.prompt, {
      sessionId: one.sessionId,
      prompt: [{ type: 'text', text: 'Never mind.' }],
    });
    await pair.agent.notify(methods.agent.session.cancel, { sessionId: one.sessionId });
    expect(await cancelled).toEqual({ stopReason: 'cancelled' });
    environment.api.enqueue(textReply('Done.'));
    environment.api.releaseHeld();
    expect(await other).toEqual({ stopReason: 'end_turn' });
    expect(pair.agentText(one.sessionId)).not.toContain('Too late.');
  });
});
