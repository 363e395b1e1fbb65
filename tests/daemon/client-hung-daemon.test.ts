// @tether/client against a real daemon that hangs: its process stopped (SIGSTOP) while its port
// still accepts connections, which is how a host meets a hung daemon. Neither a call nor a
// subscription may wait for it forever, and what they say must hold once it answers again.
import type { ChildProcess } from 'node:child_process';
import { type ConnectionState, type TetherClient, createTetherClient } from '@tether/client';
import type { ProtocolEvent } from '@tether/protocol';
import { agentErrorOf } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonPerTest, spawnDaemonChild } from './daemon-test-helpers.js';

const fixture = daemonPerTest();
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  child = undefined;
});

/** A daemon in its own process (so it can be stopped), a client of it, and an open session. */
async function hangableDaemon(options: { silenceLimitMs?: number } = {}) {
  const environment = await fixture.environment();
  const daemon = await spawnDaemonChild(environment);
  child = daemon.child;
  const client = createTetherClient({
    url: daemon.url,
    token: daemon.token,
    reconnect: { initialDelayMs: 10, maxDelayMs: 100, ...options },
  });
  const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  return { client, sessionId, process: daemon.child };
}

/** Every stored event of the session (up to its snapshot's lastSeq). */
async function storedEvents(client: TetherClient, sessionId: string): Promise<ProtocolEvent[]> {
  const { lastSeq } = await client.getSession(sessionId);
  const stop = new AbortController();
  const events: ProtocolEvent[] = [];
  for await (const event of client.subscribe(sessionId, { signal: stop.signal })) {
    events.push(event);
    if (event.seq === lastSeq) stop.abort();
  }
  return events;
}

describe('@tether/client and a daemon that stops answering', () => {
  it('a command that timed out may have been applied: sent again with its commandId, it is answered and applied once', async () => {
    const { client, sessionId, process } = await hangableDaemon();
    process.kill('SIGSTOP');
    const error = await agentErrorOf(
      client.setPermissionMode({ sessionId, mode: 'plan', commandId: 'hung-mode-1' }, { timeoutMs: 300 }),
    );
    expect(error).toMatchObject({ code: 'runtime_stopped', retryable: true, details: { reason: 'request_timeout' } });
    expect(error.message).toContain('may or may not have been applied');
    expect(error.message).toContain('same commandId (hung-mode-1) is safe');

    process.kill('SIGCONT');
    const receipt = await client.setPermissionMode({ sessionId, mode: 'plan', commandId: 'hung-mode-1' });
    expect(receipt).toMatchObject({ type: 'set_permission_mode', commandId: 'hung-mode-1', mode: 'plan' });
    expect(await client.setPermissionMode({ sessionId, mode: 'plan', commandId: 'hung-mode-1' })).toEqual(receipt);
    const modeChanges = (await storedEvents(client, sessionId)).filter(
      (event) => event.type === 'session.mode_changed',
    );
    expect(modeChanges).toHaveLength(1);
  });

  it('a subscription treats the silence as a break and resumes from its last seq once the daemon answers', async () => {
    const { client, sessionId, process } = await hangableDaemon({ silenceLimitMs: 300 });
    const { lastSeq } = await client.getSession(sessionId);
    const states: ConnectionState[] = [];
    let reconnecting!: () => void;
    const firstBreak = new Promise<void>((resolve) => {
      reconnecting = resolve;
    });
    const stop = new AbortController();
    const events = client
      .subscribe(sessionId, {
        signal: stop.signal,
        onConnectionChange: (state) => {
          states.push(state);
          if (state === 'reconnecting') reconnecting();
        },
      })
      [Symbol.asyncIterator]();
    const seen: number[] = [];
    while (seen.at(-1) !== lastSeq) seen.push(((await events.next()).value as ProtocolEvent).seq);
    // Waiting for the next event when the daemon stops: nothing comes, not even a ping.
    const next = events.next();
    process.kill('SIGSTOP');
    await firstBreak;
    expect(states.slice(0, 2)).toEqual(['open', 'reconnecting']);

    process.kill('SIGCONT');
    await client.setPermissionMode({ sessionId, mode: 'plan' });
    const event = (await next).value as ProtocolEvent;
    expect(event).toMatchObject({ type: 'session.mode_changed', seq: lastSeq + 1 });
    expect(seen).toEqual(Array.from({ length: lastSeq }, (_, index) => index + 1));
    expect(states.slice(2)).toContain('open');
    stop.abort();
    expect(await events.next()).toEqual({ done: true, value: undefined });
  });
});
