import { AgentError, type PermissionMode, type SessionDiff, newRunId, newSessionId } from '@tether/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTetherClient } from './index.js';
import type { TetherClient } from './index.js';
import { type FakeDaemon, startFakeDaemon } from './test-support/fake-daemon.js';
import { sampleModelList, sampleSnapshot } from './test-support/sample-records.js';
import { agentErrorOf } from '@tether/testkit';

describe('TetherClient commands and reads', () => {
  let daemon: FakeDaemon;
  let client: TetherClient;

  beforeEach(async () => {
    daemon = await startFakeDaemon();
    client = createTetherClient({ url: `${daemon.url}/`, token: daemon.token });
  });
  afterEach(async () => {
    await daemon.close();
  });

  it('sends typed commands with the token and a generated commandId, and answers typed receipts', async () => {
    const opened = await client.openSession({ workspace: { kind: 'directory', path: '/repo' }, model: 'sonnet' });
    expect(opened.type).toBe('open_session');
    const request = daemon.requests.at(-1)!;
    expect(request).toMatchObject({ method: 'POST', path: '/v1/commands' });
    expect(request.headers.authorization).toBe(`Bearer ${daemon.token}`);
    expect(request.body).toEqual({
      type: 'open_session',
      commandId: opened.commandId,
      workspace: { kind: 'directory', path: '/repo' },
      model: 'sonnet',
    });
    expect(opened.commandId).toMatch(/^cmd_[0-9a-f]{32}$/);

    const turn = await client.submitTurn({
      sessionId: opened.sessionId,
      input: [{ type: 'text', text: 'hi' }],
      commandId: 'my-command-1',
    });
    expect(turn).toMatchObject({ type: 'submit_turn', commandId: 'my-command-1', sessionId: opened.sessionId });
    expect(turn.runId).toMatch(/^run_/);

    const mode = await client.setPermissionMode({ sessionId: opened.sessionId, mode: 'plan' });
    expect(mode.mode).toBe('plan');
    const model = await client.dispatch({
      type: 'set_model',
      commandId: 'c-2',
      sessionId: opened.sessionId,
      model: 'opus',
    });
    expect(model.model).toBe('opus');
    expect((await client.getContextUsage({ sessionId: opened.sessionId })).usage.maxTokens).toBe(200_000);
    expect((await client.getSessionCost({ sessionId: opened.sessionId })).report).toBe('');
    expect((await client.interruptRun({ sessionId: opened.sessionId })).runId).toBeNull();
    expect((await client.runControl({ sessionId: opened.sessionId, name: 'compact' })).type).toBe('run_control');
    expect((await client.closeSession({ sessionId: opened.sessionId })).type).toBe('close_session');
  });

  it("rebuilds the daemon's errors as AgentError, details included", async () => {
    daemon.answerCommand = () =>
      new AgentError({
        code: 'provider_rejected',
        message: 'The agent did not apply the stop; retry.',
        details: { reason: 'input_still_queued' },
      });
    const error = await agentErrorOf(client.interruptRun({ sessionId: newSessionId() }));
    expect(error.toObject()).toEqual({
      code: 'provider_rejected',
      message: 'The agent did not apply the stop; retry.',
      retryable: true,
      details: { reason: 'input_still_queued' },
    });

    const invalid = await agentErrorOf(
      client.dispatch({ type: 'set_model', commandId: 'bad id!', sessionId: newSessionId(), model: 'opus' }),
    );
    expect(invalid.code).toBe('invalid_command');
    expect(invalid.details?.issues?.[0]?.path).toBe('commandId');

    expect((await agentErrorOf(client.getSession(newSessionId()))).code).toBe('session_not_found');
  });

  it('maps an answer that is not a Tether error from its status', async () => {
    daemon.answerCommand = () => ({ httpStatus: 502, rawBody: '<html>Bad gateway</html>' });
    const error = await agentErrorOf(client.closeSession({ sessionId: newSessionId() }));
    expect(error).toMatchObject({
      code: 'internal_error',
      retryable: true,
      details: { httpStatus: 502, reason: 'unexpected_status' },
    });
  });

  it('refuses a receipt that does not validate or answers another command', async () => {
    const sessionId = newSessionId();
    daemon.answerCommand = (command) => ({ type: 'close_session', commandId: command.commandId, sessionId });
    const wrongType = await agentErrorOf(client.setModel({ sessionId, model: 'opus' }));
    expect(wrongType).toMatchObject({ code: 'internal_error', details: { reason: 'invalid_response' } });
    daemon.answerCommand = (command) => ({
      type: 'submit_turn',
      commandId: command.commandId,
      sessionId,
      runId: 'not-a-run-id',
    });
    const invalid = await agentErrorOf(client.submitTurn({ sessionId, input: [{ type: 'text', text: 'x' }] }));
    expect(invalid.details?.issues?.[0]?.path).toBe('runId');
  });

  it('refuses a snapshot whose title or last run does not validate', async () => {
    const badRun = sampleSnapshot({
      lastRun: { runId: 'not-a-run-id', outcome: 'failed', completedAt: '2026-01-01T00:01:00.000Z' },
    });
    const longTitle = sampleSnapshot({ title: 'x'.repeat(201) });
    daemon.addSession(badRun);
    daemon.addSession(longTitle);
    const error = await agentErrorOf(client.getSession(badRun.sessionId));
    expect(error).toMatchObject({ code: 'internal_error', details: { reason: 'invalid_response' } });
    expect(error.details?.issues?.[0]?.path).toBe('lastRun.runId');
    expect((await agentErrorOf(client.getSession(longTitle.sessionId))).details?.issues?.[0]?.path).toBe('title');
  });

  it('reads which permission modes need a restart, and asks for the restart only when told to', async () => {
    const session = sampleSnapshot({ modesRequiringRestart: ['bypass'] });
    daemon.addSession(session);
    expect((await client.getSession(session.sessionId)).modesRequiringRestart).toEqual(['bypass']);
    const unknownMode = sampleSnapshot({ modesRequiringRestart: ['yolo' as PermissionMode] });
    daemon.addSession(unknownMode);
    expect((await agentErrorOf(client.getSession(unknownMode.sessionId))).details?.issues?.[0]?.path).toBe(
      'modesRequiringRestart.0',
    );

    await client.setPermissionMode({ sessionId: session.sessionId, mode: 'plan' });
    expect(daemon.requests.at(-1)!.body).not.toHaveProperty('restart');
    const receipt = await client.setPermissionMode({ sessionId: session.sessionId, mode: 'bypass', restart: true });
    expect(daemon.requests.at(-1)!.body).toMatchObject({ type: 'set_permission_mode', mode: 'bypass', restart: true });
    expect(receipt.mode).toBe('bypass');
  });

  it('answers 401 with unauthorized, pointing at `tether token`', async () => {
    const wrong = createTetherClient({ url: daemon.url, token: 'wrong' });
    const error = await agentErrorOf(wrong.openSession({ workspace: { kind: 'directory', path: '/repo' } }));
    expect(error.code).toBe('unauthorized');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('tether token');
    expect((await agentErrorOf(wrong.listSessions())).code).toBe('unauthorized');
  });

  it('takes the token as read from its file, line break included', async () => {
    const fromFile = createTetherClient({ url: daemon.url, token: `${daemon.token}\n` });
    expect((await fromFile.listSessions()).sessions).toEqual([]);
  });

  it('answers runtime_stopped (retryable) when the daemon is not running', async () => {
    const stopped = await startFakeDaemon();
    await stopped.close();
    const error = await agentErrorOf(createTetherClient({ url: stopped.url, token: 't' }).getProviders());
    expect(error.code).toBe('runtime_stopped');
    expect(error.retryable).toBe(true);
    expect(error.message).toBe(`The Tether daemon at ${stopped.url} is not reachable; is \`tether serve\` running?`);
  });

  it('pages through sessions with the cursor, newest first, filtered by state', async () => {
    const snapshots = Array.from({ length: 5 }, (_, index) =>
      sampleSnapshot({ createdAt: `2026-01-0${index + 1}T00:00:00.000Z`, state: index === 2 ? 'closed' : 'idle' }),
    );
    for (const snapshot of snapshots) daemon.addSession(snapshot);
    const newestFirst = [...snapshots].reverse().map((snapshot) => snapshot.sessionId);

    const first = await client.listSessions({ limit: 2 });
    expect(first.sessions.map((snapshot) => snapshot.sessionId)).toEqual(newestFirst.slice(0, 2));
    const second = await client.listSessions({ limit: 2, before: first.next! });
    expect(second.sessions.map((snapshot) => snapshot.sessionId)).toEqual(newestFirst.slice(2, 4));

    const pagesBefore = daemon.requests.length;
    const all = await client.listAllSessions({ limit: 2 });
    expect(all.map((snapshot) => snapshot.sessionId)).toEqual(newestFirst);
    expect(daemon.requests.slice(pagesBefore).map((request) => request.query.get('before'))).toEqual([
      null,
      newestFirst[1],
      newestFirst[3],
    ]);

    const idle = await client.listAllSessions({ state: 'idle' });
    expect(idle.map((snapshot) => snapshot.sessionId)).toEqual(
      newestFirst.filter((id) => id !== snapshots[2]!.sessionId),
    );
    expect((await agentErrorOf(client.listSessions({ limit: 501 }))).code).toBe('invalid_command');
  });

  it('reads a session, deletes closed ones only, lists providers, checks health without the token', async () => {
    const open = sampleSnapshot({
      lastSeq: 4,
      title: 'Fix the build',
      lastRun: { runId: newRunId(), outcome: 'failed', completedAt: '2026-01-01T00:01:00.000Z' },
      lastActivityAt: '2026-01-01T00:01:00.000Z',
    });
    const closed = sampleSnapshot({ state: 'closed' });
    daemon.addSession(open);
    daemon.addSession(closed);
    expect(await client.getSession(open.sessionId)).toEqual(open);
    expect((await agentErrorOf(client.deleteSession(open.sessionId))).code).toBe('session_open');
    await expect(client.deleteSession(closed.sessionId)).resolves.toEqual({
      sessionId: closed.sessionId,
      workspaceStatus: closed.workspaceStatus,
    });
    expect(daemon.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/sessions/${closed.sessionId}` });
    // A daemon from before deletes answered (204): deleted all the same, its workspace untold.
    const older = sampleSnapshot({ state: 'closed' });
    daemon.addSession(older);
    daemon.deleteWithoutAnswer = true;
    expect(await client.deleteSession(older.sessionId)).toEqual({ sessionId: older.sessionId, workspaceStatus: null });

    const [provider] = await client.getProviders();
    expect(provider).toMatchObject({
      name: 'claude',
      capabilities: { approvals: true, inputParts: ['text'] },
      availability: { available: true },
    });

    expect(await client.health()).toEqual({ ok: true, version: '0.1.0' });
    expect(daemon.requests.at(-1)!.headers.authorization).toBeUndefined();
  });

  it("reads a session's diff (maxBytes passed on), validated; a directory workspace's refusal is typed", async () => {
    const sessionId = newSessionId();
    const diff: SessionDiff = {
      sessionId,
      baseCommit: 'a'.repeat(40),
      branch: 'tether/0123abcd',
      files: [{ path: 'notes.txt', status: 'added', added: 2, removed: 0, binary: false }],
      diff: 'diff --git a/notes.txt b/notes.txt\n',
      truncated: false,
    };
    daemon.answerDiff = (id) =>
      id === sessionId ? diff : new AgentError({ code: 'session_not_found', message: 'No.' });
    expect(await client.getSessionDiff(sessionId, { maxBytes: 4096 })).toEqual(diff);
    expect(daemon.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v1/sessions/${sessionId}/diff` });
    expect(daemon.requests.at(-1)!.query.get('maxBytes')).toBe('4096');
    await client.getSessionDiff(sessionId);
    expect(daemon.requests.at(-1)!.query.has('maxBytes')).toBe(false);

    daemon.answerDiff = () =>
      new AgentError({
        code: 'capability_unsupported',
        message: 'A directory has no diff.',
        details: { reason: 'workspace_diff' },
      });
    expect(await agentErrorOf(client.getSessionDiff(sessionId))).toMatchObject({
      code: 'capability_unsupported',
      details: { reason: 'workspace_diff' },
    });
    daemon.answerDiff = () => ({ ...diff, files: [{ path: 'x', status: 'copied' }] }) as never;
    const invalid = await agentErrorOf(client.getSessionDiff(sessionId));
    expect(invalid).toMatchObject({ code: 'internal_error', details: { reason: 'invalid_response' } });
    expect(invalid.details?.issues?.[0]?.path).toMatch(/^files\.0\./);
  });

  it('deletes a session whose worktree holds work only when told to discard it; the refusal is typed', async () => {
    const closed = sampleSnapshot({ state: 'closed' });
    daemon.addSession(closed);
    daemon.refuseDelete = (_snapshot, query) =>
      query.get('discardWorkspaceChanges') === 'true'
        ? null
        : new AgentError({
            code: 'workspace_has_changes',
            message: 'The worktree /data/worktrees/x (branch tether/x) holds uncommitted changes.',
            details: { reason: 'uncommitted_changes' },
          });
    expect(await agentErrorOf(client.deleteSession(closed.sessionId))).toMatchObject({
      code: 'workspace_has_changes',
      message: 'The worktree /data/worktrees/x (branch tether/x) holds uncommitted changes.',
      details: { reason: 'uncommitted_changes' },
    });
    expect(daemon.requests.at(-1)!.query.has('discardWorkspaceChanges')).toBe(false);
    expect((await agentErrorOf(client.deleteSession(closed.sessionId, { discardWorkspaceChanges: false }))).code).toBe(
      'workspace_has_changes',
    );
    expect(daemon.requests.at(-1)!.query.has('discardWorkspaceChanges')).toBe(false);
    await expect(client.deleteSession(closed.sessionId, { discardWorkspaceChanges: true })).resolves.toMatchObject({
      sessionId: closed.sessionId,
    });
    expect(daemon.requests.at(-1)).toMatchObject({ method: 'DELETE', path: `/v1/sessions/${closed.sessionId}` });
    expect(daemon.requests.at(-1)!.query.get('discardWorkspaceChanges')).toBe('true');
    expect((await agentErrorOf(client.getSession(closed.sessionId))).code).toBe('session_not_found');
  });

  it("lists a provider's models (the daemon's first provider when none is named), validated", async () => {
    expect(await client.listModels('claude')).toEqual(sampleModelList);
    expect(daemon.requests.at(-1)).toMatchObject({ method: 'GET', path: '/v1/providers/claude/models' });
    expect(await client.listModels()).toEqual(sampleModelList);
    expect(daemon.requests.slice(-2).map((request) => request.path)).toEqual([
      '/v1/providers',
      '/v1/providers/claude/models',
    ]);
    expect((await agentErrorOf(client.listModels('other'))).code).toBe('route_not_found');
    daemon.answerModels = () =>
      new AgentError({ code: 'capability_unsupported', message: 'This provider has no model list.' });
    expect((await agentErrorOf(client.listModels('claude'))).code).toBe('capability_unsupported');
    daemon.answerModels = () => ({ ...sampleModelList, models: [{ id: '' }] }) as never;
    const invalid = await agentErrorOf(client.listModels('claude'));
    expect(invalid).toMatchObject({ code: 'internal_error', details: { reason: 'invalid_response' } });
    expect(invalid.details?.issues?.[0]?.path).toBe('models.0.id');
  });

  it("reads a session's blob as bytes with its media type; another session's or a non-image answer is refused", async () => {
    const sessionId = newSessionId();
    const sha256 = 'a'.repeat(64);
    const bytes = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 255]);
    daemon.addBlob(sessionId, sha256, { contentType: 'image/png', bytes });
    const blob = await client.readBlob(sessionId, sha256);
    expect(blob.mediaType).toBe('image/png');
    expect([...blob.bytes]).toEqual([...bytes]);
    expect(daemon.requests.at(-1)).toMatchObject({ method: 'GET', path: `/v1/sessions/${sessionId}/blobs/${sha256}` });
    expect(daemon.requests.at(-1)!.headers.authorization).toBe(`Bearer ${daemon.token}`);

    expect((await agentErrorOf(client.readBlob(newSessionId(), sha256))).code).toBe('blob_not_found');
    const wrong = createTetherClient({ url: daemon.url, token: 'wrong' });
    expect((await agentErrorOf(wrong.readBlob(sessionId, sha256))).code).toBe('unauthorized');
    const page = 'b'.repeat(64);
    daemon.addBlob(sessionId, page, { contentType: 'text/html', bytes: new TextEncoder().encode('<p>proxy</p>') });
    expect(await agentErrorOf(client.readBlob(sessionId, page))).toMatchObject({
      code: 'internal_error',
      details: { reason: 'invalid_response' },
    });
  });

  it('sends fork_session and rewind_session from the command table, answering typed receipts', async () => {
    const sessionId = newSessionId();
    const runId = newRunId();
    const fork = await client.forkSession({ sessionId, atRunId: runId });
    expect(daemon.requests.at(-1)!.body).toMatchObject({ type: 'fork_session', sessionId, atRunId: runId });
    expect(fork).toMatchObject({ type: 'fork_session', sessionId, atRunId: runId });
    expect(fork.forkSessionId).toMatch(/^ses_/);
    const rewind = await client.rewindSession({ sessionId, toRunId: runId, files: true });
    expect(daemon.requests.at(-1)!.body).toMatchObject({
      type: 'rewind_session',
      sessionId,
      toRunId: runId,
      files: true,
    });
    expect(rewind).toMatchObject({ type: 'rewind_session', toRunId: runId, files: null });
  });
});
