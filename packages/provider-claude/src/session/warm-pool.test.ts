import { describe, expect, it } from 'vitest';
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
