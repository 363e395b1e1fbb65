import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { type ContentBlock, methods } from '@tether/acp/test-support';
import { processesWithEnvironment, waitForEvent, killProcessesWithEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useAcp } from './acp-harness.js';

/** A 1×1 PNG a decoder accepts (the CLI decodes images before it sends them). */
const onePixelPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

describe('ACP prompts against the real binary', () => {
  const start = useAcp();

  it('advertises what works, then answers a prompt with its chunks and end_turn', async () => {
    const { environment, pair } = await start();
    environment.api.enqueue(textReply('Hello from the fake model.', { chunks: 4 }));
    const { sessionId, modes, configOptions } = await pair.agent.request(methods.agent.session.new, {
      cwd: environment.workspace,
      mcpServers: [],
    });
    expect(modes?.currentModeId).toBe('ask_before_edit');
    expect(configOptions?.map((option) => option.id)).toContain('mode');
    const response = await pair.prompt(sessionId, 'Say hello.');
    expect(response).toEqual({ stopReason: 'end_turn' });
    // Streamed in chunks (the agent's deltas of one block that were waiting together arrive as one).
    expect(pair.updatesOf(sessionId, 'agent_message_chunk').length).toBeGreaterThanOrEqual(1);
    expect(pair.agentText(sessionId)).toBe('Hello from the fake model.');
    // The client sent the prompt itself: it is not echoed back.
    expect(pair.updatesOf(sessionId, 'user_message_chunk')).toEqual([]);
    expect(pair.updatesOf(sessionId, 'session_info_update')).toEqual([
      { sessionUpdate: 'session_info_update', title: 'Say hello.', updatedAt: expect.any(String) },
    ]);
    const commands = pair.updatesOf(sessionId, 'available_commands_update')[0]?.availableCommands ?? [];
    expect(commands.map((command) => command.name)).toEqual(
      expect.arrayContaining(['compact', 'clear', 'cost', 'context', 'review', 'init']),
    );
  });

  it('ends a prompt whose answer reached the output limit with max_tokens', async () => {
    const { environment, pair } = await start();
    environment.api.setResponder(() => ({
      kind: 'message',
      content: [{ type: 'text', text: 'This essay is cut off', chunks: 2 }],
      stopReason: 'max_tokens',
    }));
    const sessionId = await pair.newSession(environment.workspace);
    const response = await pair.prompt(sessionId, 'Write a long essay.');
    expect(response).toEqual({ stopReason: 'max_tokens' });
    expect(pair.agentText(sessionId)).toContain('This essay is cut off');
  });

  it("runs Tether's controls as slash commands: /cost shows its output once, /compact compacts through the model", async () => {
    const { environment, pair } = await start();
    const sessionId = await pair.newSession(environment.workspace);
    await pair.prompt(sessionId, 'Remember LIME.');
    const before = pair.agentText(sessionId);
    expect(await pair.prompt(sessionId, '/cost')).toEqual({ stopReason: 'end_turn' });
    const costText = pair.agentText(sessionId).slice(before.length);
    expect(costText.split('Estimated cost')).toHaveLength(2);
    expect(await pair.prompt(sessionId, '/compact keep only the fruit')).toEqual({ stopReason: 'end_turn' });
    expect(environment.api.requests.some((request) => request.kind === 'compaction')).toBe(true);
  });

  it('sends images and an embedded resource to the model', async () => {
    const { environment, pair } = await start();
    environment.api.enqueue(textReply('I see them.'));
    const sessionId = await pair.newSession(environment.workspace);
    const response = await pair.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'Look at this.' },
        { type: 'image', mimeType: 'image/png', data: onePixelPng },
        {
          type: 'resource',
          resource: { uri: 'file:///notes/plan.md', mimeType: 'text/markdown', text: 'PLAN-TEXT-42' },
        },
      ],
    });
    expect(response.stopReason).toBe('end_turn');
    const [turn] = environment.api.requests.filter((request) => request.kind === 'turn');
    const blocks = turn!.view!.lastUserBlocks;
    expect(blocks.filter((block) => block.type === 'image')).toEqual([
      { type: 'image', mediaType: 'image/png', data: onePixelPng },
    ]);
    expect(turn!.view!.lastUserText).toContain('<resource uri="file:///notes/plan.md">\nPLAN-TEXT-42\n</resource>');
  });

  it("an @path in an embedded resource's text attaches nothing: it is a file's content, not the user's mention", async () => {
    const { environment, pair } = await start();
    environment.api.enqueue(textReply('Read it.'));
    const outside = path.join(environment.home, 'secret-credentials.txt');
    await writeFile(outside, 'SECRET-VALUE-77\n');
    const sessionId = await pair.newSession(environment.workspace);
    await pair.agent.request(methods.agent.session.prompt, {
      sessionId,
      prompt: [
        { type: 'text', text: 'Summarise this file.' },
        { type: 'resource', resource: { uri: 'file:///notes/README.md', text: `Setup: see @${outside}\n` } },
      ],
    });
    const [turn] = environment.api.requests.filter((request) => request.kind === 'turn');
    expect(turn!.view!.attachedFiles).toEqual([]);
    expect(JSON.stringify(turn!.body)).not.toContain('SECRET-VALUE-77');
    // The model still reads the text as written (a zero-width space stands before the "@").
    expect(turn!.view!.lastUserText).toContain(`Setup: see \u200b@${outside}`);
  });

  it('cancels a prompt mid-stream: cancelled, and no agent process left', async () => {
    const { environment, runtime, pair } = await start();
    environment.api.enqueue(textReply('word '.repeat(200), { chunks: 100, delayMs: 50 }));
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Talk slowly.');
    await waitForEvent(runtime, sessionId, 'run.message_delta');
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    expect(await answered).toEqual({ stopReason: 'cancelled' });
    expect((await runtime.getSession(sessionId)).lastRun?.outcome).toBe('interrupted');
    // What `tether acp` does when its client goes: the connection ends, then the runtime.
    await pair.close();
    await runtime.shutdown();
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('answers a prompt whose agent crashed mid-turn with an error carrying the code', async () => {
    const { environment, runtime, pair } = await start();
    environment.api.enqueue(holdReply());
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Crash now.');
    await environment.api.waitForRequests(1, { kind: 'turn' });
    killProcessesWithEnvironment('HOME', environment.home);
    await expect(answered).rejects.toMatchObject({
      code: -32603,
      data: { code: 'provider_crashed', retryable: true },
    });
    expect((await runtime.getSession(sessionId)).lastRun?.outcome).toBe('failed');
  });

  it("a prompt block Tether refuses is named as the client's block (an empty one before it counts), with ACP's field names", async () => {
    const { environment, pair } = await start();
    const sessionId = await pair.newSession(environment.workspace);
    const refusal = (prompt: ContentBlock[]) =>
      pair.agent.request(methods.agent.session.prompt, { sessionId, prompt }).then(
        () => null,
        (error: unknown) => error,
      );
    expect(
      await refusal([
        { type: 'text', text: '' },
        { type: 'text', text: 'Look.' },
        { type: 'image', mimeType: 'image/png', data: 'bm90IGFuIGltYWdl' },
      ]),
    ).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^Prompt block 3 of 3 is not a PNG, JPEG, GIF or WebP image/),
      data: { code: 'invalid_command', details: { reason: 'not_an_image', index: 2 } },
    });
    expect(
      await refusal([
        { type: 'text', text: ' ' },
        { type: 'image', mimeType: 'image/png', data: `data:image/png;base64,${onePixelPng}` },
      ]),
    ).toMatchObject({
      message: expect.stringMatching(/^Prompt block 2 of 2 has a data: URL; .* with the type in "mimeType"\.$/),
      data: { details: { index: 1 } },
    });
    expect(
      await refusal([
        { type: 'text', text: '' },
        { type: 'resource_link', uri: 'file:///etc/hostname', name: 'hostname' },
      ]),
    ).toMatchObject({
      message: expect.stringMatching(/^Prompt block 2 of 2: \/etc\/hostname is outside the session's workspace/),
      data: { details: { reason: 'file_outside_workspace', index: 1 } },
    });
    // Nothing ran.
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toEqual([]);
  });
});
