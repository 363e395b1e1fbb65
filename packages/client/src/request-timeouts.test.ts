import { newSessionId } from '@tether/protocol';
import { agentErrorOf } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTetherClient } from './index.js';
import type { TetherClient } from './index.js';
import { type FakeDaemon, startFakeDaemon } from './test-support/fake-daemon.js';
import { sampleSnapshot } from './test-support/sample-records.js';
import { type SilentServer, startSilentServer } from './test-support/silent-server.js';

describe('TetherClient against a daemon that accepts and never answers', () => {
  let hung: SilentServer;

  beforeEach(async () => {
    hung = await startSilentServer();
  });
  afterEach(async () => {
    await hung.close();
  });

  it('rejects every quick read with runtime_stopped request_timeout once requestTimeoutMs passes', async () => {
    const client = createTetherClient({ url: hung.url, token: 't', requestTimeoutMs: 50 });
    const sessionId = newSessionId();
    const calls: [string, Promise<unknown>][] = [
      [`GET /v1/sessions/${sessionId}`, client.getSession(sessionId)],
      ['GET /v1/sessions', client.listSessions()],
      ['GET /v1/sessions', client.listAllSessions()],
      ['GET /v1/providers', client.getProviders()],
      [`GET /v1/sessions/${sessionId}/blobs/${'a'.repeat(64)}`, client.readBlob(sessionId, 'a'.repeat(64))],
      ['GET /health', client.health()],
    ];
    for (const [description, call] of calls) {
      const error = await agentErrorOf(call);
      expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true, details: { reason: 'request_timeout' } });
      expect(error.message).toBe(
        `The Tether daemon at ${hung.url} did not answer ${description} within 50 ms; it may be hung or overloaded. Check that \`tether serve\` answers (GET /health) and retry, or raise requestTimeoutMs (or this call's timeoutMs) if the daemon is only slow.`,
      );
    }
  });

  it('a command whose connection breaks once sent may have been applied: answer_lost naming its commandId, not "not reachable"', async () => {
    const client = createTetherClient({ url: hung.url, token: 't' });
    const sent = agentErrorOf(
      client.submitTurn({ sessionId: newSessionId(), commandId: 'cmd-lost-1', input: [{ type: 'text', text: 'Hi.' }] }),
    );
    await hung.waitForConnections(1);
    await hung.close();
    const error = await sent;
    expect(error).toMatchObject({
      code: 'runtime_stopped',
      retryable: true,
      details: { reason: 'answer_lost', commandId: 'cmd-lost-1' },
    });
    expect(error.message).toContain('may or may not have been applied');
    expect(error.message).toContain('same commandId (cmd-lost-1)');
  });

  it("a command whose fetch failed saying nothing of why (a browser's) is not reachable, and how to resend it safely", async () => {
    const browserLike = (() => Promise.reject(new TypeError('Failed to fetch'))) as typeof fetch;
    const client = createTetherClient({ url: hung.url, token: 't', fetch: browserLike });
    const error = await agentErrorOf(
      client.submitTurn({
        sessionId: newSessionId(),
        commandId: 'cmd-browser-1',
        input: [{ type: 'text', text: 'Hi.' }],
      }),
    );
    expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true, details: { commandId: 'cmd-browser-1' } });
    expect(error.message).toContain('is not reachable');
    expect(error.message).toContain('same commandId (cmd-browser-1) is safe');
    // A read says only that.
    expect((await agentErrorOf(client.listSessions())).message).toBe(
      `The Tether daemon at ${hung.url} is not reachable; is \`tether serve\` running?`,
    );
  });

  it('a call whose signal aborted before it was sent says so, and sends nothing', async () => {
    const client = createTetherClient({ url: hung.url, token: 't' });
    const error = await agentErrorOf(
      client.submitTurn(
        { sessionId: newSessionId(), input: [{ type: 'text', text: 'Hi.' }] },
        { signal: AbortSignal.abort() },
      ),
    );
    expect(error).toMatchObject({ code: 'runtime_stopped', details: { reason: 'request_aborted' } });
    expect(error.message).toMatch(/^The submit_turn command was not sent .*Nothing was applied\.$/);
    expect(hung.connections()).toBe(0);
  });

  it('gives commands and the calls that wait on an agent or git the longer commandTimeoutMs', async () => {
    const client = createTetherClient({ url: hung.url, token: 't', requestTimeoutMs: 50, commandTimeoutMs: 60_000 });
    const sessionId = newSessionId();
    const stop = new AbortController();
    const slow = [
      client.setModel({ sessionId, model: 'opus' }, { signal: stop.signal }),
      client.listModels('claude', { signal: stop.signal }),
      client.getSessionDiff(sessionId, { signal: stop.signal }),
      client.deleteSession(sessionId, { signal: stop.signal }),
    ].map((call) => agentErrorOf(call));
    // Started after the slow calls, with the quick limit: once it has timed out, a 50 ms limit on them would have too.
    expect((await agentErrorOf(client.getSession(sessionId))).details?.reason).toBe('request_timeout');
    stop.abort();
    for (const error of await Promise.all(slow)) expect(error.details?.reason).toBe('request_aborted');

    const timedOut = await agentErrorOf(
      createTetherClient({ url: hung.url, token: 't', commandTimeoutMs: 50 }).listModels('claude'),
    );
    expect(timedOut.details?.reason).toBe('request_timeout');
    expect(timedOut.message).toContain('raise commandTimeoutMs');
  });

  it('says a command that timed out may or may not have been applied and that its commandId makes a retry safe', async () => {
    const client = createTetherClient({ url: hung.url, token: 't', commandTimeoutMs: 50 });
    const sessionId = newSessionId();
    const error = await agentErrorOf(client.setModel({ sessionId, model: 'opus', commandId: 'host-retry-1' }));
    expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true, details: { reason: 'request_timeout' } });
    expect(error.message).toBe(
      `The Tether daemon at ${hung.url} did not answer the set_model command within 50 ms, so it may or may not have been applied. Sending it again with the same commandId (host-retry-1) is safe: the daemon applies a commandId once and answers a repeat with the original receipt. Check that \`tether serve\` answers (GET /health), or raise commandTimeoutMs (or this call's timeoutMs) if the daemon is only slow.`,
    );
    // A generated commandId is named too: without it the caller could not retry.
    const generated = await agentErrorOf(client.closeSession({ sessionId }));
    expect(generated.message).toMatch(/same commandId \(cmd_[0-9a-f]{32}\) is safe/);
  });

  it("takes a call's own timeoutMs over the client's, for dispatch and typed methods alike", async () => {
    const client = createTetherClient({
      url: hung.url,
      token: 't',
      requestTimeoutMs: Number.POSITIVE_INFINITY,
      commandTimeoutMs: Number.POSITIVE_INFINITY,
    });
    const sessionId = newSessionId();
    const dispatched = await agentErrorOf(
      client.dispatch({ type: 'interrupt_run', commandId: 'c-1', sessionId }, { timeoutMs: 30 }),
    );
    expect(dispatched.message).toContain('did not answer the interrupt_run command within 30 ms');
    expect((await agentErrorOf(client.interruptRun({ sessionId }, { timeoutMs: 30 }))).details?.reason).toBe(
      'request_timeout',
    );
    expect((await agentErrorOf(client.getSession(sessionId, { timeoutMs: 30 }))).details?.reason).toBe(
      'request_timeout',
    );
  });

  it("rejects at once with request_aborted when the caller's signal aborts, a command saying it may have been applied", async () => {
    const client = createTetherClient({ url: hung.url, token: 't' });
    const sessionId = newSessionId();
    const stop = new AbortController();
    const read = agentErrorOf(client.getSession(sessionId, { signal: stop.signal }));
    const command = agentErrorOf(client.closeSession({ sessionId, commandId: 'close-1' }, { signal: stop.signal }));
    await hung.waitForConnections(2);
    stop.abort();
    const readError = await read;
    expect(readError).toMatchObject({
      code: 'runtime_stopped',
      retryable: true,
      details: { reason: 'request_aborted' },
    });
    expect(readError.message).toBe(
      `The request GET /v1/sessions/${sessionId} to the Tether daemon at ${hung.url} was aborted by its signal before the daemon answered; send it again if you still need the answer.`,
    );
    expect((await command).message).toBe(
      `The close_session command to the Tether daemon at ${hung.url} was aborted by its signal before the daemon answered, so it may or may not have been applied. Sending it again with the same commandId (close-1) is safe: the daemon applies a commandId once and answers a repeat with the original receipt.`,
    );
  });

  it('refuses a time limit that is not a number above 0, at construction and per call', async () => {
    for (const requestTimeoutMs of [0, -1, Number.NaN]) {
      expect(() => createTetherClient({ url: hung.url, token: 't', requestTimeoutMs })).toThrow(
        expect.objectContaining({ code: 'invalid_command', details: { reason: 'invalid_timeout' } }),
      );
    }
    expect(() => createTetherClient({ url: hung.url, token: 't', reconnect: { silenceLimitMs: 0 } })).toThrow(
      expect.objectContaining({ code: 'invalid_command', details: { reason: 'invalid_timeout' } }),
    );
    const client = createTetherClient({ url: hung.url, token: 't' });
    const error = await agentErrorOf(client.health({ timeoutMs: -5 }));
    expect(error).toMatchObject({ code: 'invalid_command', details: { reason: 'invalid_timeout' } });
    expect(hung.connections()).toBe(0);
  });

  it('refuses reconnection delays and attempts that would retry in a busy loop, at construction', () => {
    const refusal = (reason: string) => expect.objectContaining({ code: 'invalid_command', details: { reason } });
    for (const reconnect of [
      { initialDelayMs: Number.NaN },
      { initialDelayMs: -5 },
      { initialDelayMs: 0 },
      { maxDelayMs: Number.NaN },
    ]) {
      expect(() => createTetherClient({ url: hung.url, token: 't', reconnect })).toThrow(refusal('invalid_timeout'));
    }
    for (const maxAttempts of [-1, 1.5, Number.NaN]) {
      expect(() => createTetherClient({ url: hung.url, token: 't', reconnect: { maxAttempts } })).toThrow(
        refusal('invalid_attempts'),
      );
    }
    expect(hung.connections()).toBe(0);
  });

  it('refuses a daemon address without its scheme, and a token no daemon could have, naming neither token', () => {
    // A query or fragment would swallow every path; a port fetch refuses ("bad port") fails every call before it is sent.
    for (const url of [
      '127.0.0.1:7437',
      'localhost:7437',
      'ftp://127.0.0.1:7437',
      '',
      'http://127.0.0.1:7437?x=1',
      'http://127.0.0.1:7437#top',
      'http://127.0.0.1:6000',
      'http://127.0.0.1:1',
    ]) {
      expect(() => createTetherClient({ url, token: 't' })).toThrow(
        expect.objectContaining({ code: 'invalid_command', details: { reason: 'invalid_url' }, retryable: false }),
      );
    }
    for (const token of ['tether_abc\ndef', 'tether_abc…', 'tether abc', '']) {
      let refused: unknown;
      try {
        createTetherClient({ url: hung.url, token });
      } catch (error) {
        refused = error;
      }
      expect(refused).toMatchObject({ code: 'invalid_command', details: { reason: 'invalid_token' } });
      expect((refused as Error).message).not.toContain('tether_abc');
    }
    expect(hung.connections()).toBe(0);
  });
});

describe('TetherClient calls with a signal, against a daemon that answers', () => {
  let daemon: FakeDaemon;
  let client: TetherClient;

  beforeEach(async () => {
    daemon = await startFakeDaemon();
    client = createTetherClient({ url: daemon.url, token: daemon.token, requestTimeoutMs: 5_000 });
  });
  afterEach(async () => {
    await daemon.close();
  });

  it('answers as usual within the limit, and sends nothing when the signal has already aborted', async () => {
    const snapshot = sampleSnapshot();
    daemon.addSession(snapshot);
    const live = new AbortController();
    expect(await client.getSession(snapshot.sessionId, { signal: live.signal, timeoutMs: 5_000 })).toEqual(snapshot);
    expect(
      (await client.openSession({ workspace: { kind: 'directory', path: '/repo' } }, { signal: live.signal })).type,
    ).toBe('open_session');
    const before = daemon.requests.length;
    const aborted = AbortSignal.abort();
    expect((await agentErrorOf(client.getSession(snapshot.sessionId, { signal: aborted }))).details?.reason).toBe(
      'request_aborted',
    );
    expect((await agentErrorOf(client.closeSession({ sessionId: snapshot.sessionId }, { signal: aborted }))).code).toBe(
      'runtime_stopped',
    );
    expect(daemon.requests.length).toBe(before);
  });

  it('refuses a session id that is not a string before any request', async () => {
    const before = daemon.requests.length;
    for (const call of [
      client.getSession(undefined as never),
      client.getSessionDiff(undefined as never),
      client.deleteSession(42 as never),
      client.readBlob(undefined as never, 'a'.repeat(64)),
    ]) {
      expect(await agentErrorOf(call)).toMatchObject({
        code: 'invalid_command',
        details: { reason: 'invalid_session_id' },
      });
    }
    expect(daemon.requests.length).toBe(before);
  });
});
