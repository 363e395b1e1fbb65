import { tmpdir } from 'node:os';
import type { ProtocolEvent } from '@tether/protocol';
import { createInMemoryStore } from '../store/in-memory-store.js';
import { createRehearsalProvider } from './rehearsal-provider.js';
import type { AgentRuntime, AgentRuntimeOptions } from './runtime-types.js';

/** A rehearsal that stalls must not hold the runtime's start: past this, the host starts without the head start. */
const rehearsalLimitMs = 2_000;

type CreateRuntime = (options: AgentRuntimeOptions) => Promise<AgentRuntime>;

let rehearsed = false;

/**
 * Takes one session through what a host's first session does (opened and followed, a turn answered,
 * a turn stopped after its first delta, closed) once, as the first runtime of the process starts, on
 * a runtime of its own over an in-memory store and an agent that answers at once, and throws it all
 * away. V8 compiles each function on its first call: without this, a fresh host's first session
 * reached its agent's spawn 3.4 ms later and used ~4 ms more of the host's CPU before the first delta
 * (docs/decisions/2026-12-02-first-turn-code-run-at-start-up.md). Nothing reaches the host's store,
 * its followers or any process. Never throws: it is a head start, nothing depends on it.
 */
export async function rehearseFirstTurn(createRuntime: CreateRuntime): Promise<void> {
  // What it warms up belongs to the process: a second runtime in it has nothing left to learn.
  if (rehearsed) return;
  rehearsed = true;
  let limit: NodeJS.Timeout | undefined;
  const stalled = new Promise<void>((resolve) => {
    limit = setTimeout(resolve, rehearsalLimitMs);
    limit.unref();
  });
  try {
    await Promise.race([rehearseSession(createRuntime), stalled]);
  } catch {
    // Only a head start: the first real session takes the same path all the same.
  } finally {
    clearTimeout(limit);
  }
}

/** The rehearsal itself: the types of the events its follower was delivered, in order. */
export async function rehearseSession(createRuntime: CreateRuntime): Promise<string[]> {
  const runtime = await createRuntime({
    providers: [createRehearsalProvider()],
    store: createInMemoryStore(),
    onBackgroundError: () => undefined,
  });
  const following = new AbortController();
  try {
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: tmpdir() } });
    const follower = new Follower(runtime.subscribe(sessionId, { signal: following.signal }));
    const answered = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
    await follower.until((event) => event.type === 'run.completed' && event.runId === answered.runId);
    const stopped = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
    await follower.until((event) => event.type === 'run.message_delta' && event.runId === stopped.runId);
    await runtime.interruptRun({ sessionId, runId: stopped.runId });
    await follower.until((event) => event.type === 'run.completed' && event.runId === stopped.runId);
    await runtime.closeSession({ sessionId });
    await follower.until((event) => event.type === 'session.closed');
    return follower.delivered;
  } finally {
    following.abort();
    await runtime.shutdown();
  }
}

/** Reads a subscription up to the next event a step waits for, keeping the types of all it was delivered. */
class Follower {
  readonly delivered: string[] = [];
  private readonly events: AsyncIterator<ProtocolEvent>;

  constructor(events: AsyncIterable<ProtocolEvent>) {
    this.events = events[Symbol.asyncIterator]();
  }

  async until(wanted: (event: ProtocolEvent) => boolean): Promise<void> {
    for (;;) {
      const next = await this.events.next();
      if (next.done) throw new Error('the rehearsal session stopped being followed');
      this.delivered.push(next.value.type);
      if (wanted(next.value)) return;
    }
  }
}
