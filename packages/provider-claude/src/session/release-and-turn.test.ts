import os from 'node:os';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaudeConnection, ConnectionListener, LaunchPlan } from '../connection/claude-connection.js';
import { ClaudeSession } from './claude-session.js';
import { ProcessPool } from './process-pool.js';

/** An agent the test drives: what it was launched with and sent, and a stop that ends when the test says. */
interface FakeAgent {
  readonly plan: LaunchPlan;
  /** Every user line written to it, taken or not. */
  readonly sent: unknown[];
  stopAsked: boolean;
  /** The process exits: the session hears the end, and the stop it asked for settles. */
  end(): void;
}

function fakeAgents() {
  const agents: FakeAgent[] = [];
  const connect = (plan: LaunchPlan, listener: ConnectionListener): ClaudeConnection => {
    let running = true;
    let stopped!: () => void;
    const exited = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    const agent: FakeAgent = {
      plan,
      sent: [],
      stopAsked: false,
      end() {
        if (!running) return;
        running = false;
        listener.onEnd({ kind: 'exited', exitCode: 0, signal: null, stderrTail: '' });
        stopped();
      },
    };
    agents.push(agent);
    return {
      transport: 'cli',
      process: { pid: 1000 + agents.length, startTime: 1, marker: `marker-${agents.length}` },
      get running() {
        return running;
      },
      // Every write is recorded; one after the stop was asked fails, as the input is closed then (EOF).
      send: (message) => {
        agent.sent.push(message);
        return running && !agent.stopAsked;
      },
      request: () => new Promise(() => undefined),
      answerPrompt: () => false,
      stop: () => {
        agent.stopAsked = true;
        return exited;
      },
      swept: () => exited,
    };
  };
  return { agents, connect };
}

const sessions: ClaudeSession[] = [];
let everyAgent: FakeAgent[] = [];

afterEach(async () => {
  vi.useRealTimers();
  const stopping = sessions.map((session) => session.doStop('close'));
  for (const agent of everyAgent) agent.end();
  await Promise.all(stopping);
  sessions.length = 0;
  everyAgent = [];
});

function openSession(
  pool: ProcessPool,
  connect: (plan: LaunchPlan, listener: ConnectionListener) => ClaudeConnection,
  resumeProviderSessionId: string | null,
): { session: ClaudeSession; emitted: AgentProviderV1Part[] } {
  const emitted: AgentProviderV1Part[] = [];
  const session = new ClaudeSession(
    {
      sessionId: `ses_${sessions.length}`,
      // A folder that exists: a start checks it is there (the agents here are doubles).
      workspace: { kind: 'directory', path: os.tmpdir() },
      configuration: {},
      ephemeral: false,
      resumeProviderSessionId,
      emit: (part) => emitted.push(part),
    },
    {
      transport: 'cli',
      connect,
      binaryPath: '/nonexistent/claude',
      checkBinary: async () => undefined,
      correlation: 'stamped',
      inheritedEnvironment: {},
      keepInheritedOAuthToken: false,
      maxRetries: undefined,
      approvals: 'bridge',
      questions: 'bridge',
      toolInputDetail: 'full',
      pool,
      warmPool: null,
      idleReleaseMs: 0,
      startupTimeoutMs: 0,
      stallTimeoutMs: 60_000,
      stallGraceMs: 1_000,
      interruptTimeoutMs: 15_000,
    },
  );
  sessions.push(session);
  return { session, emitted };
}

function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

const text = (value: string) => [{ type: 'text' as const, text: value }];

/** One slot; session one's agent runs idle in it (resuming conv-one); session two has none yet. */
async function oneIdleAgentInTheOnlySlot() {
  const { agents, connect } = fakeAgents();
  everyAgent = agents;
  const pool = new ProcessPool({ limit: 1, whenFull: 'queue' });
  const one = openSession(pool, connect, 'conv-one');
  const two = openSession(pool, connect, null);
  await one.session.doStart();
  expect(agents).toHaveLength(1);
  return { agents, one, two };
}

describe("a turn for a session whose idle agent is being let go for another session's turn", () => {
  it('is never written to that agent: it waits for its end, then a new agent resumes the conversation through the queue', async () => {
    const { agents, one, two } = await oneIdleAgentInTheOnlySlot();

    const other = two.session.doTurn({ runId: 'run-two', input: text('Hello.') });
    // Chosen and stopped in one step: there is no moment at which the victim is chosen but not yet being let go.
    expect(agents[0]!.stopAsked).toBe(true);
    const turn = one.session.doTurn({ runId: 'run-one', input: text('Which fruit?') });
    await settle();
    expect(agents[0]!.sent).toEqual([]);
    expect(agents).toHaveLength(1);

    agents[0]!.end();
    await other;
    await settle();
    // The other session got the slot; this turn waits for it, with its position.
    expect(agents).toHaveLength(2);
    expect(agents[1]!.sent).toHaveLength(1);
    expect(one.emitted.map((part) => part.type)).toEqual([
      'session.process_started',
      'session.process_stopped',
      'run.queued',
    ]);
    expect(one.emitted[1]).toMatchObject({ reason: 'idle' });
    expect(one.emitted[2]).toMatchObject({ runId: 'run-one', position: 0 });

    // The slot frees up: the turn goes to a new agent, resuming the conversation.
    const closing = two.session.doStop('close');
    agents[1]!.end();
    await closing;
    await turn;
    expect(agents).toHaveLength(3);
    expect(agents[2]!.plan.conversation).toEqual({ kind: 'resume', providerSessionId: 'conv-one' });
    expect(agents[2]!.sent).toMatchObject([{ type: 'user', message: { content: 'Which fruit?' } }]);
    expect(one.emitted.filter((part) => part.type === 'run.completed')).toEqual([]);
  });

  it('an agent that exits slowly after its EOF does not fail the waiting turn (no stdin_closed)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { agents, one, two } = await oneIdleAgentInTheOnlySlot();
    void two.session.doTurn({ runId: 'run-two', input: text('Hello.') });
    const turn = one.session.doTurn({ runId: 'run-one', input: text('Which fruit?') });
    // Longer than the second a session gives an agent whose input failed before it counts as no longer reading.
    await vi.advanceTimersByTimeAsync(1_200);
    agents[0]!.end();
    await settle();
    expect(one.emitted.filter((part) => part.type === 'diagnostic' || part.type === 'run.completed')).toEqual([]);
    expect(agents[0]!.sent).toEqual([]);
    const closing = two.session.doStop('close');
    agents[1]!.end();
    await closing;
    await turn;
    expect(agents[2]!.sent).toHaveLength(1);
  });

  it('interrupted while it waits for that end: the run ends interrupted at once and no agent is started for it', async () => {
    const { agents, one, two } = await oneIdleAgentInTheOnlySlot();
    void two.session.doTurn({ runId: 'run-two', input: text('Hello.') });
    const turn = one.session.doTurn({ runId: 'run-one', input: text('Which fruit?') });
    expect(await one.session.doInterrupt({ runId: 'run-one' })).toEqual({ applied: true });
    expect(one.emitted.at(-1)).toEqual({ type: 'run.completed', runId: 'run-one', outcome: 'interrupted' });
    agents[0]!.end();
    await turn;
    await settle();
    // Only the other session's agent started.
    expect(agents).toHaveLength(2);
    expect(agents[0]!.sent).toEqual([]);
    expect(one.emitted.map((part) => part.type)).toEqual([
      'session.process_started',
      'run.completed',
      'session.process_stopped',
    ]);
  });

  it('a turn that arrives first keeps its agent: the other session waits in the queue instead', async () => {
    const { agents, one, two } = await oneIdleAgentInTheOnlySlot();
    const turn = one.session.doTurn({ runId: 'run-one', input: text('Which fruit?') });
    void two.session.doTurn({ runId: 'run-two', input: text('Hello.') });
    await turn;
    await settle();
    expect(agents[0]!.stopAsked).toBe(false);
    expect(agents[0]!.sent).toHaveLength(1);
    expect(two.emitted).toEqual([{ type: 'run.queued', runId: 'run-two', position: 0 }]);
  });
});
