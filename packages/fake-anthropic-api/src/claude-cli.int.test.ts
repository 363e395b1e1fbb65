/** The real claude binary (2.1.332) against the fake. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { errorReply, holdReply, startFakeAnthropicApi, textReply, thinkingReply, toolUseReply } from './index.js';
import type { FakeAnthropicApi } from './index.js';
import { startClaude } from './claude-process.test-helper.js';
import type { ClaudeProcess, Frame, StartClaudeOptions } from './claude-process.test-helper.js';

let api: FakeAnthropicApi;
let claude: ClaudeProcess | undefined;

beforeEach(async () => {
  api = await startFakeAnthropicApi();
});
afterEach(async () => {
  await claude?.dispose();
  claude = undefined;
  await api.close();
});

function launch(options: Omit<StartClaudeOptions, 'baseUrl'> = {}): ClaudeProcess {
  claude = startClaude({ baseUrl: api.url, ...options });
  return claude;
}

const isResult = (frame: Frame): boolean => frame.type === 'result';
const streamEvents = (frames: Frame[], deltaType: string): Frame[] =>
  frames.filter(
    (f) => f.type === 'stream_event' && f.event.type === 'content_block_delta' && f.event.delta.type === deltaType,
  );

describe('real claude CLI against the fake', () => {
  it('streams a text reply as several text_delta frames and reports the scripted usage', async () => {
    api.enqueue(
      textReply('Hello from the fake API, in five pieces.', {
        chunks: 5,
        usage: { inputTokens: 321, outputTokens: 54, cacheReadTokens: 11, cacheCreationTokens: 22 },
      }),
    );
    const cli = launch();
    cli.send('hi');
    const result = await cli.waitForFrame(isResult);
    expect(streamEvents(cli.frames, 'text_delta').map((f) => f.event.delta.text)).toHaveLength(5);
    expect(result).toMatchObject({
      subtype: 'success',
      is_error: false,
      result: 'Hello from the fake API, in five pieces.',
      num_turns: 1,
    });
    expect(result.usage).toMatchObject({
      input_tokens: 321,
      output_tokens: 54,
      cache_read_input_tokens: 11,
      cache_creation_input_tokens: 22,
    });
    const [turn] = await api.waitForRequests(1, { kind: 'turn' });
    expect(turn!.view!.lastUserText.endsWith('hi')).toBe(true);
    expect(turn!.view!.sessionId).toBe(result.session_id);
    expect(api.requests.every((r) => !r.unscripted)).toBe(true);
  });

  it('streams a thinking block and sends it back with its signature', async () => {
    api.enqueue(
      thinkingReply('Weighing the options here.', 'Thought about it.', { chunks: 3, signature: 'sig-fake-1' }),
      textReply('second turn'),
    );
    const cli = launch();
    cli.send('think');
    await cli.waitForFrame(isResult);
    expect(streamEvents(cli.frames, 'thinking_delta')).toHaveLength(3);
    expect(cli.frames.some((f) => f.type === 'system' && f.subtype === 'thinking_tokens')).toBe(true);
    const thinking = cli.frames.find((f) => f.type === 'assistant' && f.message.content[0].type === 'thinking');
    expect(thinking!.message.content[0]).toMatchObject({
      thinking: 'Weighing the options here.',
      signature: 'sig-fake-1',
    });
    cli.send('again');
    await cli.waitForFrame((f) => isResult(f) && f.result === 'second turn');
    const [, second] = await api.waitForRequests(2, { kind: 'turn' });
    const history = JSON.stringify((second!.body as any).messages);
    expect(history).toContain('"signature":"sig-fake-1"');
  });

  it('runs a Bash tool_use in bypassPermissions mode and gets the tool_result in the next request', async () => {
    api.enqueue(
      toolUseReply('Bash', { command: 'echo hi', description: 'Print hi' }, { id: 'toolu_fake_bash_1' }),
      textReply('The command printed hi.'),
    );
    const cli = launch({ bypass: true });
    cli.send('run echo hi');
    const result = await cli.waitForFrame(isResult);
    expect(result).toMatchObject({ is_error: false, result: 'The command printed hi.', num_turns: 2 });
    const turns = await api.waitForRequests(2, { kind: 'turn' });
    expect(turns[1]!.view!.toolResults).toEqual([{ toolUseId: 'toolu_fake_bash_1', content: 'hi', isError: false }]);
    expect(cli.frames.some((f) => f.type === 'control_request')).toBe(false);
  });

  it('reports a 500 as api_retry then an error result (CLAUDE_CODE_MAX_RETRIES=1)', async () => {
    api.setResponder(() => errorReply(500, { message: 'scripted outage' }));
    const cli = launch({ maxRetries: 1 });
    cli.send('fail please');
    const result = await cli.waitForFrame(isResult);
    const retries = cli.frames.filter((f) => f.type === 'system' && f.subtype === 'api_retry');
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, max_retries: 1, error_status: 500 });
    expect(result).toMatchObject({ is_error: true, api_error_status: 500, terminal_reason: 'api_error' });
    expect(api.requests.filter((r) => r.kind === 'turn' && r.replyKind === 'error')).toHaveLength(2);
  });

  it('keeps a held stream open after stdin ends, until releaseHeld() makes the CLI retry', async () => {
    api.enqueue(holdReply(), textReply('after the release'));
    const cli = launch({ maxRetries: 1 });
    cli.send('wait for it');
    await cli.waitForFrame((f) => f.type === 'stream_event' && f.event.type === 'message_start');
    await api.waitForRequests(1, { kind: 'turn' });
    expect(api.heldCount).toBe(1);
    cli.endStdin();
    // Stdin EOF finishes the running turn first: the turn is still waiting on the held stream.
    expect(cli.frames.some(isResult)).toBe(false);
    expect(cli.child.exitCode).toBeNull();
    api.releaseHeld();
    const result = await cli.waitForFrame(isResult);
    expect(result).toMatchObject({ is_error: false, result: 'after the release' });
    expect(cli.frames.some((f) => f.type === 'system' && f.subtype === 'api_retry' && f.error_status === null)).toBe(
      true,
    );
    expect((await cli.exited).code).toBe(0);
  });

  it('notices when the CLI is killed during a held stream, and closes cleanly', async () => {
    api.enqueue(holdReply());
    const cli = launch();
    cli.send('hold on');
    await cli.waitForFrame((f) => f.type === 'stream_event' && f.event.type === 'message_start');
    expect(api.heldCount).toBe(1);
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(143);
    expect(cli.frames.some(isResult)).toBe(false);
    await vi.waitFor(() => expect(api.requests[0]!.clientAborted).toBe(true));
    expect(api.heldCount).toBe(0);
    await api.close();
  });
});
