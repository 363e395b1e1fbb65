import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { acpEnvironment, runNodeScript, tetherBin } from './acp-child.js';

/** The pinned acpx (0.19.1), a third-party ACP client, run as a user runs it. */
const acpxBin = fileURLToPath(import.meta.resolve('acpx'));

let environment: ClaudeTestEnvironment | undefined;
afterEach(async () => {
  await environment?.cleanup();
  environment = undefined;
});

interface JsonRpcMessage {
  readonly id?: number;
  readonly method?: string;
  readonly params?: unknown;
  readonly result?: unknown;
}

function acpx(args: readonly string[], env: Record<string, string>, cwd: string) {
  return runNodeScript(acpxBin, args, env, cwd);
}

/** acpx's JSON output: the conversation's JSON-RPC messages, one a line. */
function conversation(stdout: string): JsonRpcMessage[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as JsonRpcMessage);
}

/**
 * The answer to the first request of `method`: the next message with its id. Each side numbers its own
 * requests, so only in a conversation where the other side asks nothing meanwhile.
 */
function answerTo(messages: readonly JsonRpcMessage[], method: string): JsonRpcMessage | undefined {
  const asked = messages.findIndex((message) => message.method === method);
  return messages
    .slice(asked + 1)
    .find((message) => message.id === messages[asked]?.id && message.method === undefined);
}

describe('acpx drives tether acp', () => {
  it('runs a prompt whose tool call needs an approval: approved by --approve-all, the tool runs, the answer comes back', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo hello > hello.txt', description: 'Write hello.txt' }),
      textReply('I wrote hello.txt.'),
    );
    const agent = `${process.execPath} ${tetherBin} acp --data-dir ${dataDir}`;
    const result = await acpx(
      [
        '--agent',
        agent,
        '--cwd',
        environment.workspace,
        '--format',
        'json',
        '--approve-all',
        'exec',
        'Write hello.txt saying hello',
      ],
      acpEnvironment(environment),
      environment.workspace,
    );
    expect(result.code).toBe(0);
    const messages = conversation(result.stdout);
    // Each side numbers its own requests: acpx's answer is the next message with the request's id.
    const asked = messages.findIndex((message) => message.method === 'session/request_permission');
    const permission = messages[asked];
    expect(permission?.params).toMatchObject({ toolCall: { title: 'echo hello > hello.txt', kind: 'execute' } });
    const answer = messages.slice(asked + 1).find((message) => message.id === permission?.id);
    expect(answer?.result).toEqual({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    const updates = messages
      .filter((message) => message.method === 'session/update')
      .map((message) => (message.params as { update: { sessionUpdate: string; status?: string } }).update);
    expect(
      updates.filter((update) => update.sessionUpdate === 'tool_call_update').map((update) => update.status),
    ).toEqual(['in_progress', 'completed']);
    expect(updates.filter((update) => update.sessionUpdate === 'agent_message_chunk')).toEqual([
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'I wrote hello.txt.' } },
    ]);
    // The prompt's answer: acpx's session/prompt request, answered under its id. A settings update (the
    // model option, once the agent's model list is read in the background) may follow it.
    const prompt = messages.find((message) => message.method === 'session/prompt');
    const promptAnswer = messages.filter((message) => message.id === prompt?.id && message.method === undefined);
    expect(promptAnswer.map((message) => message.result)).toContainEqual({ stopReason: 'end_turn' });
    expect(readFileSync(path.join(environment.workspace, 'hello.txt'), 'utf8')).toBe('hello\n');
    expect(existsSync(dataDir)).toBe(true);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('--model: the session is opened on the model asked for and advertises it at once, without waiting for the model list', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(textReply('Hello from Haiku.'));
    const agent = `${process.execPath} ${tetherBin} acp --data-dir ${dataDir}`;
    const result = await acpx(
      ['--agent', agent, '--cwd', environment.workspace, '--format', 'json', '--model', 'haiku', 'exec', 'Say hi'],
      acpEnvironment(environment),
      environment.workspace,
    );
    expect(result.code, result.stderr).toBe(0);
    const messages = conversation(result.stdout);
    const opened = answerTo(messages, 'session/new')?.result as { configOptions?: { id: string }[] } | undefined;
    expect(opened?.configOptions?.find((option) => option.id === 'model')).toMatchObject({
      currentValue: 'haiku',
      options: expect.arrayContaining([expect.objectContaining({ value: 'haiku' })]),
    });
    expect(answerTo(messages, 'session/prompt')?.result).toEqual({ stopReason: 'end_turn' });
    // Claude Code ran the turn on the model the alias stands for.
    expect(environment.api.requests.find((request) => request.kind === 'turn')?.body).toMatchObject({
      model: expect.stringMatching(/haiku/),
    });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('--max-turns: a prompt that needs more model round trips ends max_turn_requests', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(toolUseReply('Bash', { command: 'echo hi', description: 'Say hi' }), textReply('Done.'));
    const agent = `${process.execPath} ${tetherBin} acp --data-dir ${dataDir}`;
    const result = await acpx(
      [
        ...['--agent', agent, '--cwd', environment.workspace, '--format', 'json'],
        ...['--approve-all', '--max-turns', '1', 'exec', 'Run it'],
      ],
      acpEnvironment(environment),
      environment.workspace,
    );
    const messages = conversation(result.stdout);
    // acpx sends --max-turns as Claude's ACP adapter takes it, in session/new's _meta.
    expect(messages.find((message) => message.method === 'session/new')?.params).toMatchObject({
      _meta: { claudeCode: { options: { maxTurns: 1 } } },
    });
    expect(answerTo(messages, 'session/prompt')?.result).toEqual({ stopReason: 'max_turn_requests' });
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
  it('--allowed-tools and --append-system-prompt: the tool runs without asking, the text reaches the model; --system-prompt is refused, saying how to append', async () => {
    environment = await createClaudeTestEnvironment();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo allowed > allowed.txt', description: 'Write allowed.txt' }),
      textReply('Done.'),
    );
    const agent = `${process.execPath} ${tetherBin} acp --data-dir ${dataDir}`;
    const common = ['--agent', agent, '--cwd', environment.workspace, '--format', 'json'];
    const result = await acpx(
      [...common, '--allowed-tools', 'Bash', '--append-system-prompt', 'Answer in one word.', 'exec', 'Write it'],
      acpEnvironment(environment),
      environment.workspace,
    );
    expect(result.code, result.stderr).toBe(0);
    const messages = conversation(result.stdout);
    expect(messages.find((message) => message.method === 'session/new')?.params).toMatchObject({
      _meta: { claudeCode: { options: { allowedTools: ['Bash'] } }, systemPrompt: { append: 'Answer in one word.' } },
    });
    expect(messages.filter((message) => message.method === 'session/request_permission')).toEqual([]);
    expect(answerTo(messages, 'session/prompt')?.result).toEqual({ stopReason: 'end_turn' });
    expect(readFileSync(path.join(environment.workspace, 'allowed.txt'), 'utf8')).toBe('allowed\n');
    const turn = environment.api.requests.find((request) => request.kind === 'turn');
    expect(JSON.stringify((turn?.body as { system?: unknown } | undefined)?.system)).toContain('Answer in one word.');

    const turnsBefore = environment.api.requests.length;
    const replaced = await acpx(
      [...common, '--system-prompt', 'You are a pirate.', 'exec', 'Hi'],
      acpEnvironment(environment),
      environment.workspace,
    );
    expect(replaced.code).not.toBe(0);
    expect(`${replaced.stdout}${replaced.stderr}`).toContain('_meta.systemPrompt.append');
    expect(environment.api.requests).toHaveLength(turnsBefore);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
