import { textReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SessionSnapshot, SubmitTurnReceipt } from '@tether/protocol';
import { pollUntil } from '@tether/provider-claude/test-support';
import { stopInsideCommit } from '@tether/store-postgres/test-support';
import {
  type ClaudeTestEnvironment,
  type TestPostgres,
  createClaudeTestEnvironment,
  startTestPostgres,
} from '@tether/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandId, openSession } from '../daemon/daemon-test-helpers.js';
import {
  EventFollower,
  type ServedDaemon,
  endTestDaemons,
  isDelta,
  oneTo,
  replyText,
  replayFromDatabase,
  replayThrough,
  runCompleted,
  seqs,
  serveDaemon,
  stopDaemon,
  text,
} from './scale-out-helpers.js';

// Two real `tether serve` processes on one real PostgreSQL database, each with its own data dir,
// driving the real claude binary against the fake Anthropic API. Both daemons' claude share one HOME
// (so one ~/.claude): a session that moves to the other daemon resumes its conversation only there.

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

let environment: ClaudeTestEnvironment | undefined;
const daemons: ServedDaemon[] = [];
const followers: EventFollower[] = [];
afterEach(async () => {
  await endTestDaemons(environment, daemons, followers);
  environment = undefined;
});

/**
 * A fresh database, daemons A and B on it (both given `args`), a session opened at A, and a client
 * of B following that session's events from its start.
 */
async function twoDaemons(args: readonly string[] = []) {
  environment = await createClaudeTestEnvironment();
  const database = await postgres.createDatabase();
  const [a, b] = await Promise.all(
    ['a', 'b'].map(async (name) => {
      const daemon = await serveDaemon(environment!, name, database, args);
      daemons.push(daemon);
      return daemon;
    }),
  );
  const sessionId = await openSession(a!.api, environment.workspace);
  const atB = await EventFollower.open(b!, sessionId);
  followers.push(atB);
  return { environment, database, a: a!, b: b!, sessionId, atB };
}

async function submitTurn(daemon: ServedDaemon, sessionId: string, prompt: string): Promise<string> {
  const receipt = await daemon.api.command<SubmitTurnReceipt>({
    type: 'submit_turn',
    sessionId,
    input: text(prompt),
  });
  return receipt.runId;
}

/** POSTs a command to the daemon; the status and the error's code and details when refused. */
async function tryCommand(
  daemon: ServedDaemon,
  command: Record<string, unknown>,
): Promise<{ status: number; error?: { code: string; details?: { ownerUrl?: string } } }> {
  const response = await daemon.api.request('POST', '/v1/commands', { body: { commandId: commandId(), ...command } });
  const body = (await response.json()) as { error?: { code: string; details?: { ownerUrl?: string } } };
  return { status: response.status, ...(body.error ? { error: body.error } : {}) };
}

/** A reply streamed slowly (a chunk every 150 ms, ~30 s in all): a turn still running when the test acts. */
const slowReply = () => textReply('slow '.repeat(200).trim(), { chunks: 200, delayMs: 150 });

/** The fake API's turn requests sent with a conversation holding `needle`. */
function turnRequestsHolding(environment: ClaudeTestEnvironment, needle: string) {
  return environment.api.requests.filter(
    (request) =>
      request.kind === 'turn' && JSON.stringify((request.body as { messages?: unknown }).messages).includes(needle),
  );
}

/** The run id of the session's last completed run as the daemon knows it (in memory: ahead of the database). */
async function lastRunOf(daemon: ServedDaemon, sessionId: string): Promise<string | undefined> {
  const response = await daemon.api.request('GET', `/v1/sessions/${sessionId}`);
  return ((await response.json()) as SessionSnapshot).lastRun?.runId;
}

const takenOver = (runId: string) => (event: ProtocolEvent) =>
  runCompleted(runId)(event) && event.outcome === 'failed' && event.error?.code === 'runtime_restarted';

describe('two tether daemons sharing one PostgreSQL database', () => {
  it("streams a turn driven by daemon A live through daemon B's SSE, every event once and in order, as A's log holds it", async () => {
    // Followed at B from before the turn starts.
    const { environment, database, a, sessionId, atB } = await twoDaemons();
    await atB.waitFor((event) => event.type === 'session.opened', 'session.opened');

    environment.api.enqueue(textReply('Streamed across daemons, one chunk at a time.', { chunks: 12, delayMs: 20 }));
    const runId = await submitTurn(a, sessionId, 'Hello through A');
    const completed = await atB.waitFor(runCompleted(runId), 'run.completed');
    expect(completed).toMatchObject({ outcome: 'succeeded' });

    const seen = atB.events;
    expect(seqs(seen)).toEqual(oneTo(seen.length));
    expect(seen.at(-1)).toEqual(completed);
    expect(replyText(seen, runId)).toBe('Streamed across daemons, one chunk at a time.');
    // What A's own log holds, and what the database holds, event for event.
    expect(seen).toEqual(await replayThrough(a, sessionId, completed.seq));
    expect(seen).toEqual(await replayFromDatabase(database, sessionId));
  });

  it('after kill -9 of the owner mid-turn, the survivor ends its run runtime_restarted once the lease lapses and runs the next turn with the conversation intact', async () => {
    const { environment, database, a, b, sessionId, atB } = await twoDaemons(['--lease-ttl', '2']);

    environment.api.enqueue(textReply('Noted: the password is PELICAN-42.'));
    const first = await submitTurn(a, sessionId, 'Remember the password PELICAN-42.');
    expect(await atB.waitFor(runCompleted(first), 'the first run.completed')).toMatchObject({ outcome: 'succeeded' });

    environment.api.enqueue(slowReply());
    const second = await submitTurn(a, sessionId, 'Now write slowly.');
    await atB.waitFor(isDelta(second), "the second run's first delta");
    const [claudeOfA] = a.claudeProcesses();
    expect(claudeOfA).toBeDefined();
    await stopDaemon(a, 'SIGKILL');

    // B's sweep takes the session once A's lease lapses (2 s after A's last heartbeat).
    const killedAt = atB.events.length;
    const ended = await atB.waitFor(takenOver(second), 'the second run ended runtime_restarted', { from: killedAt });
    expect(ended).toMatchObject({ error: { retryable: true } });
    expect((ended as { error: { message: string } }).error.message).toContain('the session was taken over');
    await atB.waitFor(
      (event) => event.type === 'session.process_stopped' && event.reason === 'restarted',
      'session.process_stopped restarted',
      { from: killedAt },
    );
    // A's claude, left behind by the crash, was ended by B's takeover (same machine: pid, start time and marker match).
    expect(await pollUntil(() => a.claudeProcesses().length === 0, { timeoutMs: 10_000 })).toBe(true);

    // The next turn runs at B, resuming the conversation A's claude had (the same ~/.claude).
    environment.api.enqueue(textReply('It was PELICAN-42.'));
    const third = await submitTurn(b, sessionId, 'What was the password?');
    expect(await atB.waitFor(runCompleted(third), 'the third run.completed')).toMatchObject({ outcome: 'succeeded' });
    const asked = turnRequestsHolding(environment, 'What was the password?');
    expect(asked).toHaveLength(1);
    const conversation = JSON.stringify((asked[0]!.body as { messages: unknown }).messages);
    expect(conversation).toContain('Remember the password PELICAN-42.');
    expect(conversation).toContain('Noted: the password is PELICAN-42.');

    const stored = await replayFromDatabase(database, sessionId);
    expect(seqs(stored)).toEqual(oneTo(stored.length));
    expect(stored).toEqual(atB.events);
  });

  it('a stale owner (SIGSTOPped inside a commit, past its lease, then continued) writes nothing more and is refused session_owned_elsewhere', async () => {
    const { environment, database, a, b, sessionId, atB } = await twoDaemons(['--lease-ttl', '2']);

    environment.api.enqueue(slowReply());
    const stale = await submitTurn(a, sessionId, 'Write slowly.');
    await atB.waitFor(isDelta(stale), 'the first delta');
    // A stops inside a commit: its transaction holds the session's lease FOR SHARE, which a takeover
    // waits for until the server ends that transaction, idle past the lease ttl. A's claude streams on
    // into A's pipe.
    await stopInsideCommit({ url: database, sessionId, stop: () => a.child.kill('SIGSTOP') });
    const stoppedAt = atB.events.length;
    await atB.waitFor(takenOver(stale), 'the run ended runtime_restarted', { from: stoppedAt });
    const takeover = await atB.waitFor(
      (event) => event.type === 'session.process_stopped' && event.reason === 'restarted',
      'session.process_stopped restarted',
      { from: stoppedAt },
    );
    const atTakeover = await replayFromDatabase(database, sessionId);
    expect(seqs(atTakeover)).toEqual(oneTo(takeover.seq));

    a.child.kill('SIGCONT');
    // A learns it lost the session (its heartbeat, or its next commit refused by the lease check) and
    // sends the caller to B; until then a command finds its run still active there and is refused too.
    const answers: Awaited<ReturnType<typeof tryCommand>>[] = [];
    await expect
      .poll(
        async () => {
          answers.push(await tryCommand(a, { type: 'submit_turn', sessionId, input: text('Still mine?') }));
          return answers.at(-1)!.error?.code;
        },
        { timeout: 10_000, interval: 100 },
      )
      .toBe('session_owned_elsewhere');
    expect(answers.filter((answer) => answer.status === 200)).toEqual([]);
    expect(answers.at(-1)).toMatchObject({ status: 409, error: { details: { ownerUrl: b.url } } });
    // What A counted of the session went with it: its agent's end is B's to publish, and to count.
    expect(await (await a.api.request('GET', '/v1/metrics')).text()).toContain('tether_processes_active 0');

    // B drives the session now.
    environment.api.enqueue(textReply('Done at B.'));
    const next = await submitTurn(b, sessionId, 'Carry on at B.');
    expect(await atB.waitFor(runCompleted(next), 'the next run.completed')).toMatchObject({ outcome: 'succeeded' });

    expect(await stopDaemon(a)).toBe(0);
    expect(await stopDaemon(b)).toBe(0);
    const stored = await replayFromDatabase(database, sessionId);
    expect(seqs(stored)).toEqual(oneTo(stored.length));
    expect(stored).toEqual(atB.events);
    // Everything after the takeover is B's: nothing of A's run, which A's claude went on streaming.
    expect(stored.slice(0, atTakeover.length)).toEqual(atTakeover);
    const afterTakeover = stored.slice(atTakeover.length);
    expect(afterTakeover.filter((event) => 'runId' in event && event.runId === stale)).toEqual([]);
    expect(afterTakeover.every((event) => !('runId' in event) || event.runId === next)).toBe(true);
  });

  it("keeps B's follower of A's session going over a PostgreSQL restart mid-turn: no gap, nothing committed lost, the next turn runs", async () => {
    // The default lease (15 s) outlasts the outage: the restart is no failover.
    const { environment, database, a, sessionId, atB } = await twoDaemons();

    const reply = Array.from({ length: 20 }, (_, index) => `part${index}`).join(' ');
    environment.api.enqueue(textReply(reply, { chunks: 20, delayMs: 100 }));
    const during = await submitTurn(a, sessionId, 'Write through the outage.');
    await atB.waitFor(isDelta(during), 'the first delta');
    const beforeRestart = [...atB.events];
    await postgres.restart({
      // The database stays down until A's claude has finished the turn: all the rest of it is
      // written (retried) and handed on across daemons only once the server is back.
      whileStopped: () => expect.poll(() => lastRunOf(a, sessionId), { timeout: 10_000, interval: 50 }).toBe(during),
    });
    const completed = await atB.waitFor(runCompleted(during), 'run.completed after the restart');
    expect(completed).toMatchObject({ outcome: 'succeeded' });
    expect(replyText(atB.events, during)).toBe(reply);

    environment.api.enqueue(textReply('After the restart.'));
    const after = await submitTurn(a, sessionId, 'And once it is back?');
    expect(await atB.waitFor(runCompleted(after), 'the next run.completed')).toMatchObject({ outcome: 'succeeded' });

    const seen = atB.events;
    expect(seqs(seen)).toEqual(oneTo(seen.length));
    expect(seen.slice(0, beforeRestart.length)).toEqual(beforeRestart);
    const stored = await replayFromDatabase(database, sessionId);
    expect(stored).toEqual(seen);
    expect(await replayThrough(a, sessionId, seen.at(-1)!.seq)).toEqual(seen);
  });
});
