import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { methods } from '@tether/acp/test-support';
import { pollFor } from '@tether/provider-claude/test-support';
import { waitForEvent } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { connectClient, runtimeHost, useAcp } from './acp-harness.js';

describe('ACP sessions against the real binary', () => {
  const start = useAcp();

  it('session/load replays the conversation exactly once, then follows the next turn live', async () => {
    const { environment, runtime, pair } = await start();
    environment.api.enqueue(textReply('First answer.', { chunks: 3 }), textReply('Second answer.'));
    const sessionId = await pair.newSession(environment.workspace);
    await pair.prompt(sessionId, 'One.');
    const liveChunks = pair.updatesOf(sessionId, 'agent_message_chunk').length;

    const second = await connectClient(runtimeHost(runtime));
    try {
      await second.agent.request(methods.agent.session.load, { sessionId, cwd: environment.workspace, mcpServers: [] });
      expect(second.updatesOf(sessionId, 'user_message_chunk')).toEqual([
        { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'One.' } },
      ]);
      expect(second.updatesOf(sessionId, 'agent_message_chunk')).toHaveLength(liveChunks);
      expect(second.agentText(sessionId)).toBe('First answer.');
      await second.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Two.' }] });
      expect(second.agentText(sessionId)).toBe('First answer.Second answer.');
      expect(second.updatesOf(sessionId, 'user_message_chunk')).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it('session/load on the connection whose prompt is running: the history again, and the prompt goes on to end_turn', async () => {
    const { environment, pair } = await start();
    environment.api.enqueue(holdReply());
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Hold on.');
    await environment.api.waitForRequests(1, { kind: 'turn' });
    await pollFor(() => (environment.api.heldCount === 1 ? true : undefined));
    // An editor reopening the chat it shows: the history again, then what comes next.
    await pair.agent.request(methods.agent.session.load, { sessionId, cwd: environment.workspace, mcpServers: [] });
    expect(pair.updatesOf(sessionId, 'user_message_chunk')).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'Hold on.' } },
    ]);
    environment.api.enqueue(textReply('Held long enough.'));
    environment.api.releaseHeld();
    expect(await answered).toEqual({ stopReason: 'end_turn' });
    expect(pair.agentText(sessionId)).toBe('Held long enough.');
    // The next prompt is the client's own: not echoed back.
    environment.api.enqueue(textReply('Next.'));
    await pair.prompt(sessionId, 'Next?');
    expect(pair.updatesOf(sessionId, 'user_message_chunk')).toHaveLength(1);
  });

  it('session/resume on the connection whose prompt waits for an approval: asked once, and the answer runs the tool', async () => {
    const asked: string[] = [];
    let allow: (() => void) | undefined;
    const { environment, runtime, pair } = await start({
      onPermission: (request) => {
        asked.push(request.toolCall.toolCallId);
        return new Promise((resolve) => {
          allow = () => resolve({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
        });
      },
    });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo resumed > resumed.txt', description: 'Write' }),
      textReply('Written.'),
    );
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Write it.');
    await waitForEvent(runtime, sessionId, 'interaction.requested');
    await pollFor(() => allow);
    await pair.agent.request(methods.agent.session.resume, { sessionId, cwd: environment.workspace });
    allow!();
    expect(await answered).toEqual({ stopReason: 'end_turn' });
    expect(asked).toHaveLength(1);
    expect(readFileSync(path.join(environment.workspace, 'resumed.txt'), 'utf8')).toBe('resumed\n');
  });

  it('session/list shows sessions opened elsewhere, with their titles; resume and close work on them', async () => {
    const { environment, runtime, pair } = await start();
    environment.api.enqueue(textReply('Made elsewhere.'));
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello from the CLI.' }] })).runId,
    );
    const listed = await pair.agent.request(methods.agent.session.list, {});
    expect(listed.sessions).toEqual([
      { sessionId, cwd: environment.workspace, title: 'Hello from the CLI.', updatedAt: expect.any(String) },
    ]);
    expect(listed.nextCursor ?? null).toBeNull();
    const elsewhere = await pair.agent.request(methods.agent.session.list, { cwd: '/somewhere/else' });
    expect(elsewhere.sessions).toEqual([]);
    const resumed = await pair.agent.request(methods.agent.session.resume, { sessionId, cwd: environment.workspace });
    expect(resumed.modes?.currentModeId).toBe('ask_before_edit');
    expect(pair.updatesOf(sessionId, 'agent_message_chunk')).toEqual([]);
    await pair.agent.request(methods.agent.session.close, { sessionId });
    expect((await runtime.getSession(sessionId)).state).toBe('closed');
  });

  it("session/load and session/resume refuse a cwd that is not the session's folder, changing nothing; the folder spelled otherwise loads, and its tools run there", async () => {
    const { environment, runtime, pair } = await start();
    const sessionId = await pair.newSession(environment.workspace);
    await pair.agent.request(methods.agent.session.close, { sessionId });
    const elsewhere = path.join(environment.home, 'elsewhere');
    await mkdir(elsewhere);
    const editor = await connectClient(runtimeHost(runtime), {
      onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }),
    });
    try {
      for (const method of [methods.agent.session.load, methods.agent.session.resume]) {
        const refused = editor.agent.request(method, { sessionId, cwd: elsewhere, mcpServers: [] });
        await expect(refused).rejects.toMatchObject({
          code: -32602,
          data: { code: 'invalid_workspace' },
          message: expect.stringContaining(`belongs to ${environment.workspace}, not ${elsewhere}`),
        });
      }
      // Refused before anything changed: still closed, nothing followed, no agent started.
      expect((await runtime.getSession(sessionId)).state).toBe('closed');
      await expect(
        editor.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Hi.' }] }),
      ).rejects.toMatchObject({ code: -32002 });

      // The same folder with a trailing "/." is that folder.
      await editor.agent.request(methods.agent.session.load, {
        sessionId,
        cwd: `${environment.workspace}/.`,
        mcpServers: [],
      });
      environment.api.enqueue(
        toolUseReply('Bash', { command: 'pwd > where.txt', description: 'Say where' }),
        textReply('Done.'),
      );
      const answer = await editor.agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: 'text', text: 'Where are you?' }],
      });
      expect(answer).toEqual({ stopReason: 'end_turn' });
      expect(readFileSync(path.join(environment.workspace, 'where.txt'), 'utf8')).toBe(`${environment.workspace}\n`);
    } finally {
      await editor.close();
    }
  });

  it('one spelling per folder: session/new stores it without a trailing slash, session/list matches any spelling, a relative cwd is refused', async () => {
    const { environment, runtime, pair } = await start();
    const { sessionId } = await pair.agent.request(methods.agent.session.new, {
      cwd: `${environment.workspace}/`,
      mcpServers: [],
    });
    expect((await runtime.getSession(sessionId)).workspace).toEqual({ kind: 'directory', path: environment.workspace });
    const listed = { sessionId, cwd: environment.workspace, title: null, updatedAt: expect.any(String) };
    for (const cwd of [environment.workspace, `${environment.workspace}/`, `${environment.workspace}/./`]) {
      expect((await pair.agent.request(methods.agent.session.list, { cwd })).sessions).toEqual([listed]);
    }
    for (const request of [
      pair.agent.request(methods.agent.session.list, { cwd: 'workspace' }),
      pair.agent.request(methods.agent.session.new, { cwd: 'workspace', mcpServers: [] }),
      pair.agent.request(methods.agent.session.load, { sessionId, cwd: '.', mcpServers: [] }),
    ]) {
      await expect(request).rejects.toMatchObject({
        code: -32602,
        data: { code: 'invalid_command' },
        message: expect.stringContaining('must be an absolute path'),
      });
    }
    expect(await runtime.listSessions({ limit: 10 })).toHaveLength(1);
  });

  it('passes the MCP servers as a private configuration file, kept while the session is open, removed when it closes', async () => {
    const { environment, runtime, pair } = await start();
    const { sessionId } = await pair.agent.request(methods.agent.session.new, {
      cwd: environment.workspace,
      mcpServers: [
        { name: 'local', command: '/usr/bin/true', args: ['--flag'], env: [{ name: 'TOKEN', value: 'secret' }] },
        {
          type: 'http',
          name: 'remote',
          url: 'https://mcp.example.test/',
          headers: [{ name: 'Authorization', value: 'Bearer x' }],
        },
      ],
    });
    const configPath = (await runtime.getSession(sessionId)).configuration.mcpConfigPath as string;
    expect(statSync(configPath).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({
      mcpServers: {
        local: { type: 'stdio', command: '/usr/bin/true', args: ['--flag'], env: { TOKEN: 'secret' } },
        remote: { type: 'http', url: 'https://mcp.example.test/', headers: { Authorization: 'Bearer x' } },
      },
    });
    const kept = await pair.agent.request(methods.agent.session.new, {
      cwd: environment.workspace,
      mcpServers: [{ name: 'local', command: '/usr/bin/true', args: [], env: [] }],
    });
    const keptPath = (await runtime.getSession(kept.sessionId)).configuration.mcpConfigPath as string;
    await pair.agent.request(methods.agent.session.close, { sessionId });
    expect(existsSync(configPath)).toBe(false);
    // A session still open when its client leaves keeps its file: its agent reads it again at the next launch.
    await pair.close();
    expect(existsSync(keptPath)).toBe(true);
    await rm(path.dirname(keptPath), { recursive: true, force: true });
  });

  it('a prompt for a session not open on the connection (unknown, or closed elsewhere) is -32002 with the Tether error and what to do', async () => {
    const { environment, runtime, pair } = await start();
    const refusal = (sessionId: string) => ({
      code: -32002,
      message: expect.stringContaining('session/load'),
      data: { code: 'session_not_found', retryable: false, sessionId },
    });
    const unknown = `ses_${'0'.repeat(32)}`;
    await expect(
      pair.agent.request(methods.agent.session.prompt, { sessionId: unknown, prompt: [{ type: 'text', text: 'Hi.' }] }),
    ).rejects.toMatchObject(refusal(unknown));
    // Loading it names ACP's way to start one, not the runtime's command.
    const loadUnknown = pair.agent.request(methods.agent.session.load, {
      sessionId: unknown,
      cwd: environment.workspace,
      mcpServers: [],
    });
    await expect(loadUnknown).rejects.toMatchObject({ code: -32002, data: { code: 'session_not_found' } });
    const loadMessage = await loadUnknown.catch((error: Error) => error.message);
    expect(loadMessage).toContain('session/new');
    expect(loadMessage).not.toContain('open_session');
    const sessionId = await pair.newSession(environment.workspace);
    await runtime.closeSession({ sessionId });
    await pollFor(() => (pair.logs.some((line) => line.includes('session released')) ? true : undefined));
    await expect(pair.prompt(sessionId, 'Hi.')).rejects.toMatchObject(refusal(sessionId));
    // What the message says to do works.
    await pair.agent.request(methods.agent.session.load, { sessionId, cwd: environment.workspace, mcpServers: [] });
    environment.api.enqueue(textReply('Back again.'));
    expect(await pair.prompt(sessionId, 'Hi.')).toEqual({ stopReason: 'end_turn' });
  });

  it('the editor going away mid-turn ends the run and denies the approval it was asked', async () => {
    const { environment, runtime, pair } = await start({ onPermission: () => new Promise(() => {}) });
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'echo late > late.txt', description: 'Write' }),
      holdReply(),
    );
    const sessionId = await pair.newSession(environment.workspace);
    const answered = pair.prompt(sessionId, 'Go.');
    answered.catch(() => {});
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    await pair.close();
    const settled = await waitForEvent(runtime, sessionId, 'interaction.settled', {
      where: (event) => event.interactionRef === requested.interactionRef,
    });
    expect(settled.outcome).toBe('denied');
    const completed = await waitForEvent(runtime, sessionId, 'run.completed');
    expect(completed.outcome).toBe('interrupted');
    expect(existsSync(`${environment.workspace}/late.txt`)).toBe(false);
  });
});
