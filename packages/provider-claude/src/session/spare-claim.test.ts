import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import type { ClaudeConnection, ConnectionEnding, ConnectionListener } from '../connection/claude-connection.js';
import type { CliFrame } from '../frames/cli-frame-schemas.js';
import { type ClaimRefusal, claimSpare } from './spare-claim.js';
import type { PoolMember } from './process-pool.js';
import type { Spare } from './warm-pool.js';

/** A parked spare whose claim answer the test gives, and whose output the test writes. */
function parkedSpare() {
  let answer: { resolve: (value: unknown) => void; reject: (error: unknown) => void } | null = null;
  const requests: unknown[] = [];
  let output: ConnectionListener | null = null;
  const progress: { watching: boolean; stall: () => void } = { watching: false, stall: () => undefined };
  const connection: ClaudeConnection = {
    transport: 'cli',
    process: undefined,
    running: true,
    send: () => true,
    request: (request) => {
      requests.push(request);
      return new Promise((resolve, reject) => {
        answer = { resolve, reject };
      });
    },
    answerPrompt: async () => false,
    stop: async () => undefined,
    swept: async () => undefined,
  };
  const member: PoolMember = { canRelease: () => false, release: async () => undefined, lastActiveAt: () => 0 };
  const spare: Spare = {
    connection,
    providerSessionId: 'spare-id',
    member,
    adopt: (listener) => {
      output = listener;
    },
    watchProgress: (onStalled) => {
      progress.watching = true;
      progress.stall = onStalled;
      return () => {
        progress.watching = false;
      };
    },
  };
  return {
    spare,
    requests,
    progress,
    write: () => output!,
    answer: (value: unknown) => answer!.resolve(value),
    refuse: (error: unknown) => answer!.reject(error),
  };
}

/** A session's listener that records what reaches it. */
function recorder() {
  const seen: string[] = [];
  const refusals: ClaimRefusal[] = [];
  const listener: ConnectionListener = {
    onFrame: (frame) => seen.push(`frame ${frame.kind}`),
    onNote: (code) => seen.push(`note ${code}`),
    onPrompt: (requestId) => seen.push(`prompt ${requestId}`),
    onPromptWithdrawn: (requestId) => seen.push(`withdrawn ${requestId}`),
    onInputFailed: () => seen.push('input failed'),
    onEnd: (ending) => seen.push(`end ${ending.kind}`),
  };
  return { seen, refusals, listener, onRefused: (refusal: ClaimRefusal) => refusals.push(refusal) };
}

const result = { kind: 'result', frame: { type: 'result' } } as unknown as CliFrame;
const init = { kind: 'system', frame: { type: 'system', subtype: 'init' } } as unknown as CliFrame;

describe('claimSpare', () => {
  it("sends the session's folder and mode, and holds the spare's output until the claim is accepted", async () => {
    const parked = parkedSpare();
    const session = recorder();
    claimSpare(parked.spare, { cwd: '/work/a', permissionMode: 'plan' }, session.listener, session.onRefused);
    expect(parked.requests).toEqual([{ subtype: 'claim_session', cwd: '/work/a', permission_mode: 'plan' }]);
    // Read together with the answer, before the session could have heard it: held, then passed on in order.
    parked.write().onFrame(init);
    parked.write().onNote('claude.stdout_not_json');
    parked.answer({ status: 'ok' });
    parked.write().onFrame(result);
    expect(session.seen).toEqual([]);
    await Promise.resolve();
    expect(session.seen).toEqual(['frame system', 'note claude.stdout_not_json', 'frame result']);
    parked.write().onEnd({ kind: 'exited', exitCode: 0, signal: null, stderrTail: '' });
    expect(session.seen.at(-1)).toBe('end exited');
    expect(session.refusals).toEqual([]);
    // Its progress was watched only while the claim was out.
    expect(parked.progress.watching).toBe(false);
  });

  it('a refused claim drops what the spare said (its not_claimed result) and reports the reason once', async () => {
    const parked = parkedSpare();
    const session = recorder();
    claimSpare(parked.spare, { cwd: '/gone', permissionMode: undefined }, session.listener, session.onRefused);
    expect(parked.requests).toEqual([{ subtype: 'claim_session', cwd: '/gone' }]);
    parked.write().onFrame(result);
    parked.refuse(
      new AgentError({ code: 'provider_execution_error', message: 'refused', details: { reason: 'cwd_not_found' } }),
    );
    await Promise.resolve();
    await Promise.resolve();
    parked.write().onFrame(result);
    parked.write().onEnd({ kind: 'exited', exitCode: 1, signal: null, stderrTail: '' });
    expect(session.seen).toEqual([]);
    expect(session.refusals).toEqual([{ reason: 'cwd_not_found' }]);
  });

  it('a spare that ends before answering is a refusal that carries its end', async () => {
    const parked = parkedSpare();
    const session = recorder();
    claimSpare(parked.spare, { cwd: '/work/a', permissionMode: undefined }, session.listener, session.onRefused);
    const ending: ConnectionEnding = { kind: 'exited', exitCode: null, signal: 'SIGKILL', stderrTail: '' };
    parked.write().onEnd(ending);
    // The channel then fails the claim too: already refused, nothing more is reported.
    parked.refuse(
      new AgentError({ code: 'provider_crashed', message: 'exited', details: { reason: 'process_exited' } }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(session.seen).toEqual([]);
    expect(session.refusals).toEqual([{ reason: 'spare_exited', ending }]);
  });

  it('a refusal read after the end it caused (the sdk transport) is told by its reason; an end alone, as spare_exited', async () => {
    const ending: ConnectionEnding = { kind: 'stream_ended' };
    const parked = parkedSpare();
    const session = recorder();
    claimSpare(parked.spare, { cwd: '/work/a', permissionMode: undefined }, session.listener, session.onRefused);
    parked.write().onEnd(ending);
    parked.refuse(
      new AgentError({
        code: 'provider_execution_error',
        message: 'The claude CLI refused to claim the parked spare.',
        details: { reason: 'project_settings_not_claimable' },
      }),
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(session.refusals).toEqual([{ reason: 'project_settings_not_claimable', ending }]);

    const silent = parkedSpare();
    const alone = recorder();
    claimSpare(silent.spare, { cwd: '/work/a', permissionMode: undefined }, alone.listener, alone.onRefused);
    silent.write().onEnd(ending);
    await new Promise((resolve) => setImmediate(resolve));
    expect(alone.refusals).toEqual([{ reason: 'spare_exited', ending }]);
    expect(alone.seen).toEqual([]);

    // An acceptance read after the spare ended serves nothing: refused, never a claim with no process behind it.
    const gone = parkedSpare();
    const late = recorder();
    claimSpare(gone.spare, { cwd: '/work/a', permissionMode: undefined }, late.listener, late.onRefused);
    gone.write().onEnd(ending);
    gone.answer({});
    await new Promise((resolve) => setImmediate(resolve));
    expect(late.refusals).toEqual([{ reason: 'spare_exited', ending }]);
    expect(late.seen).toEqual([]);
  });

  it('a spare that makes no progress on its claim (hung) is refused then, not at the 30 s bound', async () => {
    const parked = parkedSpare();
    const session = recorder();
    claimSpare(parked.spare, { cwd: '/work/a', permissionMode: undefined }, session.listener, session.onRefused);
    expect(parked.progress.watching).toBe(true);
    parked.write().onFrame(init);
    parked.progress.stall();
    expect(session.refusals).toEqual([{ reason: 'spare_not_responding' }]);
    expect(parked.progress.watching).toBe(false);
    // An answer after all, or the end of the spare the session then stops: nothing more reaches the session.
    parked.answer({ status: 'ok' });
    await Promise.resolve();
    parked.write().onFrame(result);
    parked.write().onEnd({ kind: 'exited', exitCode: null, signal: 'SIGKILL', stderrTail: '' });
    expect(session.seen).toEqual([]);
    expect(session.refusals).toHaveLength(1);
  });
});
