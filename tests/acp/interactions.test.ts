import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { methods, type RequestPermissionRequest } from '@tether/acp/test-support';
import { type ClaudeTestEnvironment, sampleQuestions, killProcessesWithEnvironment } from '@tether/testkit';
import { describe, expect, it, vi } from 'vitest';
import { type ClientBehaviour, useAcp } from './acp-harness.js';

const { color, sizes } = sampleQuestions;

/** The tool-call result text the model was sent in the latest turn request. */
function lastToolResult(environment: ClaudeTestEnvironment) {
  return environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.view!.toolResults[0]!;
}

describe('ACP approvals and questions against the real binary', () => {
  const startAcp = useAcp();

  async function start(behaviour: ClientBehaviour) {
    const started = await startAcp(behaviour);
    const { sessionId } = await started.pair.agent.request(methods.agent.session.new, {
      cwd: started.environment.workspace,
      mcpServers: [],
    });
    return { ...started, sessionId };
  }

  it('asks for a Bash approval with the protocol options; allowed, the command runs and the tool call completes', async () => {
    const asked: RequestPermissionRequest[] = [];
    const { environment, pair, sessionId } = await start({
      onPermission: (request) => {
        asked.push(request);
        return { outcome: { outcome: 'selected', optionId: 'allow_once' } };
      },
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo approved > approved.txt', description: 'Write a file' }),
      textReply('Written.'),
    );
    const response = await pair.prompt(sessionId, 'Write the file.');
    expect(response.stopReason).toBe('end_turn');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.options).toEqual([
      { optionId: 'allow_once', kind: 'allow_once', name: 'Allow' },
      { optionId: 'allow_always', kind: 'allow_always', name: 'Allow for this session' },
      { optionId: 'reject_once', kind: 'reject_once', name: 'Reject' },
    ]);
    expect(asked[0]!.toolCall).toMatchObject({
      title: 'echo approved > approved.txt',
      kind: 'execute',
      rawInput: { command: 'echo approved > approved.txt', description: 'Write a file' },
    });
    expect(readFileSync(path.join(environment.workspace, 'approved.txt'), 'utf8')).toBe('approved\n');
    const toolCallId = asked[0]!.toolCall.toolCallId;
    expect(pair.updatesOf(sessionId, 'tool_call')).toMatchObject([
      { toolCallId, kind: 'execute', title: 'echo approved > approved.txt', status: 'pending' },
    ]);
    expect(pair.updatesOf(sessionId, 'tool_call_update')).toMatchObject([
      { toolCallId, status: 'in_progress' },
      { toolCallId, status: 'completed' },
    ]);
    expect(pair.agentText(sessionId)).toBe('Written.');
  });

  it('a tool call whose agent crashes while it runs ends failed, not running for ever', async () => {
    const { environment, pair, sessionId } = await start({
      onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }),
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'node -e "setTimeout(() => {}, 30000)"', description: 'Wait' }),
    );
    const prompted = pair.agent
      .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Wait a while.' }] })
      .then(
        () => null,
        (error: unknown) => error,
      );
    await vi.waitFor(
      () =>
        expect(pair.updatesOf(sessionId, 'tool_call_update').map((update) => update.status)).toContain('in_progress'),
      { timeout: 30_000 },
    );
    killProcessesWithEnvironment('HOME', environment.home);
    expect(await prompted).not.toBeNull();
    const toolCallId = pair.updatesOf(sessionId, 'tool_call')[0]!.toolCallId;
    expect(
      pair
        .updatesOf(sessionId, 'tool_call_update')
        .filter((update) => update.toolCallId === toolCallId)
        .at(-1),
    ).toMatchObject({
      status: 'failed',
    });
  });

  it('rejected: nothing runs, the model is told, the tool call fails', async () => {
    const { environment, pair, sessionId } = await start({
      onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'reject_once' } }),
    });
    environment.api.enqueue(
      toolUseReply('Write', { file_path: path.join(environment.workspace, 'denied.txt'), content: 'no\n' }),
      textReply('Understood.'),
    );
    const response = await pair.prompt(sessionId, 'Write it.');
    expect(response.stopReason).toBe('end_turn');
    expect(existsSync(path.join(environment.workspace, 'denied.txt'))).toBe(false);
    expect(lastToolResult(environment).isError).toBe(true);
    const [call] = pair.updatesOf(sessionId, 'tool_call');
    expect(call).toMatchObject({
      kind: 'edit',
      content: [{ type: 'diff', path: path.join(environment.workspace, 'denied.txt'), oldText: null, newText: 'no\n' }],
      locations: [{ path: path.join(environment.workspace, 'denied.txt') }],
    });
    expect(pair.updatesOf(sessionId, 'tool_call_update')).toMatchObject([
      { toolCallId: call!.toolCallId, status: 'failed' },
    ]);
  });

  it('asks questions through elicitation and gives the model the answers', async () => {
    const { environment, pair, sessionId } = await start({
      capabilities: { elicitation: { form: {} } },
      onElicitation: (request) => {
        expect(request).toMatchObject({ mode: 'form', sessionId });
        return { action: 'accept', content: { question_1: 'Blue', question_2: ['Small', 'Large'] } };
      },
    });
    environment.api.enqueue(toolUseReply('AskUserQuestion', { questions: [color, sizes] }), textReply('Thanks.'));
    const response = await pair.prompt(sessionId, 'Ask me.');
    expect(response.stopReason).toBe('end_turn');
    const result = lastToolResult(environment);
    expect(result.isError).toBe(false);
    expect(result.content).toContain('Blue');
    expect(result.content).toContain('Small, Large');
  });

  it('declines questions for a client without elicitation, telling the model to ask in its reply', async () => {
    const { environment, pair, sessionId } = await start({});
    environment.api.enqueue(toolUseReply('AskUserQuestion', { questions: [color] }), textReply('I will ask in words.'));
    const response = await pair.prompt(sessionId, 'Ask me.');
    expect(response.stopReason).toBe('end_turn');
    expect(lastToolResult(environment)).toMatchObject({ isError: true });
    expect(lastToolResult(environment).content).toContain('Ask them in your reply instead');
  });
});
