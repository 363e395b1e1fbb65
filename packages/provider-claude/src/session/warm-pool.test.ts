import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClaudeConnection } from '../connection/claude-connection.js';
import { ProcessPool } from './process-pool.js';
import { WarmPool } from './warm-pool.js';

/** A spare's connection whose start-up (its initialize answer) the test finishes, and which records its stop. */
function startingConnection(events: string[]) {
  let initialized: (() => void) | null = null;
  let running = true;
  const connection: ClaudeConnection = {
    transport: 'cli',
    process: undefined,
    get running() {
      return running;
    },
    send: () => true,
    request: () =>
      new Promise((resolve) => {
        initialized = () => resolve({});
      }),
    answerPrompt: async () => false,
    stop: async () => {
      events.push('spare stopped');
      running = false;
    },
    swept: async () => undefined,
  };
  return { connection, finishStarting: () => initialized?.() };
}

describe('WarmPool in a full process pool', () => {
  it("keeps a starting spare's slot until it is ready, then gives it to a waiting session", async () => {
    const events: string[] = [];
    const pool = new ProcessPool({ limit: 1, whenFull: 'queue' });
    const warmPool = new WarmPool({ spares: 1, processPool: pool });
    const spare = startingConnection(events);
    warmPool.prepare('key', () => spare.connection);
    expect(pool.activeCount).toBe(1);

    const session = { canRelease: () => false, release: async () => undefined, lastActiveAt: () => Date.now() };
    const granted = pool
      .acquire(session, (position) => events.push(`queued at ${position}`))
      .then(() => events.push('session granted'));
    // Stopping a spare that is still starting would leave its process running next to the session's.
    await Promise.resolve();
    expect(events).toEqual(['queued at 0']);
    spare.finishStarting();
    await granted;
    expect(events).toEqual(['queued at 0', 'spare stopped', 'session granted']);
    expect(await warmPool.take('key')).toBeUndefined();
  });
});

describe('WarmPool, a spare that fails to start', () => {
  it('kills a spare whose initialize failed while its process still runs (hung, or it refused), and frees its slot', async () => {
    const events: string[] = [];
    const pool = new ProcessPool({ limit: 1, whenFull: 'queue' });
    const warmPool = new WarmPool({ spares: 1, processPool: pool });
    let running = true;
    let failInitialize!: (error: Error) => void;
    const connection: ClaudeConnection = {
      transport: 'cli',
      process: undefined,
      get running() {
        return running;
      },
      send: () => true,
      request: () =>
        new Promise((_resolve, reject) => {
          failInitialize = reject;
        }),
      answerPrompt: async () => false,
      stop: async (options) => {
        events.push(`spare stopped${options.force ? ' (forced)' : ''}`);
        running = false;
      },
      swept: async () => undefined,
    };
    warmPool.prepare('key', () => connection);
    const taken = warmPool.take('key');
    // No answer to initialize in time (a claude that hangs while starting): the control request's timeout.
    failInitialize(new Error('The claude CLI did not answer the initialize request within 30000 ms.'));
    expect(await taken).toBeUndefined();
    expect(events).toEqual(['spare stopped (forced)']);
    expect(pool.activeCount).toBe(0);
    // Nothing is left for dispose to find: the spare was ended, not forgotten.
    await warmPool.dispose();
    expect(events).toEqual(['spare stopped (forced)']);
  });
});

/** A spare's connection that records how it was stopped; `ready`: its initialize is answered at once. */
function recordingConnection(stops: string[], name: string, ready: boolean, pid?: number) {
  let initialized: (() => void) | null = null;
  let running = true;
  const connection: ClaudeConnection = {
    transport: 'cli',
    process: pid === undefined ? undefined : { pid, startTime: 1, marker: 'marker' },
    get running() {
      return running;
    },
    send: () => true,
    request: () =>
      ready
        ? Promise.resolve({})
        : new Promise((resolve) => {
            initialized = () => resolve({});
          }),
    answerPrompt: async () => false,
    stop: async (options) => {
      stops.push(`${name} stopped${options.force ? ' (forced)' : ''}`);
      running = false;
    },
    swept: async () => undefined,
  };
  return { connection, finishStarting: () => initialized?.() };
}

describe('WarmPool.dispose', () => {
  async function poolWithReadyAndStartingSpares(stops: string[]) {
    const warmPool = new WarmPool({ spares: 1, processPool: new ProcessPool({ limit: 4, whenFull: 'queue' }) });
    warmPool.prepare('ready', () => recordingConnection(stops, 'ready spare', true).connection);
    warmPool.prepare('starting', () => recordingConnection(stops, 'starting spare', false).connection);
    // The ready one is in the pool once its initialize answer was taken.
    await new Promise<void>((resolve) => setImmediate(resolve));
    return warmPool;
  }

  it('forced (a host that must exit now): kills every spare at once, ready or still starting', async () => {
    const stops: string[] = [];
    const warmPool = await poolWithReadyAndStartingSpares(stops);
    await warmPool.dispose({ force: true });
    expect(stops.sort()).toEqual(['ready spare stopped (forced)', 'starting spare stopped (forced)']);
  });

  it('not forced: stops every spare gracefully', async () => {
    const stops: string[] = [];
    const warmPool = await poolWithReadyAndStartingSpares(stops);
    await warmPool.dispose();
    expect(stops.sort()).toEqual(['ready spare stopped', 'starting spare stopped']);
  });
});

/** A pool with one starting spare (pid 4242) whose CPU use the test sets (fake timers: the test moves the clock). */
async function poolWithStartingSpare(stops: string[] = []) {
  vi.useFakeTimers();
  const cpu = { ticks: 10 };
  const warmPool = new WarmPool({
    spares: 1,
    processPool: new ProcessPool({ limit: 2, whenFull: 'queue' }),
    spareProgressCheckMs: 1_000,
    cpuTicksOf: (pid) => (pid === 4242 ? cpu.ticks : undefined),
  });
  const { connection, finishStarting } = recordingConnection(stops, 'spare', false, 4242);
  warmPool.prepare('key', () => connection);
  await vi.advanceTimersByTimeAsync(0);
  return { warmPool, cpu, connection, finishStarting };
}

describe('WarmPool.take, a spare still starting', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is waited for as long as it makes progress (a slow start on a loaded machine), and handed over', async () => {
    const { warmPool, cpu, connection, finishStarting } = await poolWithStartingSpare();
    const skipped: string[] = [];
    const taken = warmPool.take('key', { onSkipped: (diagnostic) => skipped.push(diagnostic) });
    for (let look = 0; look < 5; look += 1) {
      cpu.ticks += 3;
      await vi.advanceTimersByTimeAsync(1_000);
    }
    finishStarting();
    expect((await taken)?.connection).toBe(connection);
    expect(skipped).toEqual([]);
  });

  it('is skipped once it used no CPU between two looks (hung: the session starts cold, with a diagnostic), and serves the next session if it becomes ready after all', async () => {
    const stops: string[] = [];
    const { warmPool, cpu, connection, finishStarting } = await poolWithStartingSpare(stops);
    const skipped: string[] = [];
    const taken = warmPool.take('key', { onSkipped: (diagnostic) => skipped.push(diagnostic) });
    cpu.ticks += 3;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(skipped).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await taken).toBeUndefined();
    expect(skipped).toEqual(['claude.spare_not_ready']);
    // Skipped, not stopped.
    expect(stops).toEqual([]);
    finishStarting();
    await vi.advanceTimersByTimeAsync(0);
    expect((await warmPool.take('key'))?.connection).toBe(connection);
  });
});

describe('WarmPool.take, given up (its session stopped)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('ends with nothing at once and leaves the starting spare, ready, to the next session', async () => {
    const stops: string[] = [];
    const { warmPool, cpu, connection, finishStarting } = await poolWithStartingSpare(stops);
    const skipped: string[] = [];
    const stopped = new AbortController();
    const taken = warmPool.take('key', { onSkipped: (diagnostic) => skipped.push(diagnostic), signal: stopped.signal });
    cpu.ticks += 3;
    await vi.advanceTimersByTimeAsync(1_000);
    stopped.abort();
    expect(await taken).toBeUndefined();
    // No more looks at it: given up is not skipped.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(skipped).toEqual([]);
    finishStarting();
    await vi.advanceTimersByTimeAsync(0);
    expect((await warmPool.take('key'))?.connection).toBe(connection);
    expect(stops).toEqual([]);
  });
});

describe('Spare.watchProgress, a ready spare (its claim out)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("tells once the spare's own process used no CPU over one look, and not while it works", async () => {
    const { warmPool, cpu, finishStarting } = await poolWithStartingSpare();
    finishStarting();
    await vi.advanceTimersByTimeAsync(0);
    const spare = await warmPool.take('key');
    const stalls: string[] = [];
    spare!.watchProgress(() => stalls.push('stalled'));
    cpu.ticks += 2;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stalls).toEqual([]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(stalls).toEqual(['stalled']);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(stalls).toEqual(['stalled']);
  });
});
