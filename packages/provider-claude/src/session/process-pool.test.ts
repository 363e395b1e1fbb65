import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { type PoolMember, ProcessPool } from './process-pool.js';

/** A pool member whose process is idle or busy on demand, and whose release the test can hold. */
function member(name: string, log: string[], options: { idle?: boolean; lastActiveAt?: number } = {}) {
  let idle = options.idle ?? false;
  let finishRelease: (() => void) | null = null;
  const self = {
    name,
    releasing: false,
    setIdle(value: boolean) {
      idle = value;
    },
    finishRelease() {
      finishRelease?.();
    },
    canRelease: () => idle,
    lastActiveAt: () => options.lastActiveAt ?? 0,
    release: () => {
      log.push(`release ${name}`);
      self.releasing = true;
      idle = false;
      return new Promise<void>((resolve) => {
        finishRelease = resolve;
      });
    },
  } satisfies PoolMember & Record<string, unknown>;
  return self;
}

/** acquire, recording the grant (or the withdrawal) and the queue position in `log`. */
function acquire(
  pool: ProcessPool,
  who: ReturnType<typeof member>,
  log: string[],
  withdraw?: AbortSignal,
): Promise<void> {
  return pool
    .acquire(who, (position) => log.push(`queued ${who.name} at ${position}`), withdraw)
    .then((granted) => {
      log.push(`${granted ? 'granted' : 'withdrawn'} ${who.name}`);
    });
}

/** A pool of `limit` slots whose first slot is held by a busy member, `holder`. */
async function poolWithHolder(limit: number, whenFull: 'queue' | 'fail') {
  const log: string[] = [];
  const pool = new ProcessPool({ limit, whenFull });
  const holder = member('holder', log);
  await acquire(pool, holder, log);
  return { log, pool, holder };
}

describe('ProcessPool', () => {
  it("hands a waiter the slot of a holder that goes idle, once that holder's process has stopped", async () => {
    const { log, pool, holder } = await poolWithHolder(1, 'queue');
    const waiter = member('waiter', log);
    const granted = acquire(pool, waiter, log);
    expect(log).toEqual(['granted holder', 'queued waiter at 0']);

    holder.setIdle(true);
    pool.offerIdle();
    expect(log.at(-1)).toBe('release holder');
    // The slot is the waiter's from now on, but it starts no process before the old one has gone.
    await Promise.resolve();
    expect(log).not.toContain('granted waiter');
    expect(pool.tryAcquire(member('spare', log))).toBe(false);
    holder.finishRelease();
    await granted;
    expect(log.at(-1)).toBe('granted waiter');
    expect(pool.activeCount).toBe(1);
  });

  it('serves waiters first come, first served, releasing the least recently used idle holder first', async () => {
    const log: string[] = [];
    const pool = new ProcessPool({ limit: 2, whenFull: 'queue' });
    const older = member('older', log, { lastActiveAt: 100 });
    const newer = member('newer', log, { lastActiveAt: 200 });
    await acquire(pool, newer, log);
    await acquire(pool, older, log);
    const first = member('first', log);
    const second = member('second', log);
    const third = member('third', log);
    const grants = [acquire(pool, first, log), acquire(pool, second, log), acquire(pool, third, log)];
    expect(log.filter((line) => line.startsWith('queued'))).toEqual([
      'queued first at 0',
      'queued second at 1',
      'queued third at 2',
    ]);

    newer.setIdle(true);
    older.setIdle(true);
    pool.offerIdle();
    expect(log.filter((line) => line.startsWith('release'))).toEqual(['release older', 'release newer']);
    newer.finishRelease();
    older.finishRelease();
    await Promise.all(grants.slice(0, 2));
    expect(pool.queuedCount).toBe(1);
    // The third waits for a holder to end or go idle, and gets the slot then.
    pool.release(first);
    await grants[2];
    expect(log.filter((line) => line.startsWith('granted')).slice(2)).toEqual([
      'granted first',
      'granted second',
      'granted third',
    ]);
  });

  it('lets no newcomer past the queue: a freed slot goes to the first waiter', async () => {
    const { log, pool, holder } = await poolWithHolder(1, 'queue');
    const waiting = acquire(pool, member('waiter', log), log);
    pool.release(holder);
    const late = acquire(pool, member('late', log), log);
    await waiting;
    expect(log.slice(1)).toEqual(['queued waiter at 0', 'queued late at 0', 'granted waiter']);
    expect(pool.queuedCount).toBe(1);
    void late;
  });

  it('fails fast with capacity_exceeded when asked to and no process is idle; frees an idle one otherwise', async () => {
    const { log, pool, holder } = await poolWithHolder(1, 'fail');
    const error = await acquire(pool, member('refused', log), log).catch((caught: unknown) => caught);
    expect(AgentError.isInstance(error) && error.code).toBe('capacity_exceeded');
    expect(pool.queuedCount).toBe(0);
    holder.setIdle(true);
    const granted = acquire(pool, member('next', log), log);
    holder.finishRelease();
    await granted;
    expect(log.filter((line) => !line.startsWith('granted holder'))).toEqual(['release holder', 'granted next']);
  });

  it('forgets a waiter whose session stopped', async () => {
    const { log, pool, holder } = await poolWithHolder(1, 'queue');
    const gone = member('gone', log);
    void acquire(pool, gone, log);
    const kept = acquire(pool, member('kept', log), log);
    pool.unregister(gone);
    pool.release(holder);
    await kept;
    expect(log).not.toContain('granted gone');
    expect(log).toContain('withdrawn gone');
  });

  it('takes a withdrawn waiter (its turn ended) out of the queue: those behind it move up and it is never granted', async () => {
    const { log, pool, holder } = await poolWithHolder(1, 'queue');
    const ended = new AbortController();
    const withdrawn = acquire(pool, member('ended', log), log, ended.signal);
    ended.abort();
    await withdrawn;
    const next = acquire(pool, member('next', log), log);
    expect(pool.queuedCount).toBe(1);
    pool.release(holder);
    await next;
    expect(log.slice(1)).toEqual(['queued ended at 0', 'withdrawn ended', 'queued next at 0', 'granted next']);
    expect(pool.activeCount).toBe(1);
  });

  it("lets a member whose slot is being freed for it start nothing before the idle holder's process has stopped", async () => {
    const { log, pool, holder } = await poolWithHolder(1, 'queue');
    const waiter = member('waiter', log);
    const first = acquire(pool, waiter, log);
    holder.setIdle(true);
    pool.offerIdle();
    // The same member asks again (a later turn of its session) while its grant waits for the stop.
    const again = acquire(pool, waiter, log);
    await Promise.resolve();
    await Promise.resolve();
    expect(log.filter((line) => line === 'granted waiter')).toEqual([]);
    holder.finishRelease();
    await Promise.all([first, again]);
    expect(log.filter((line) => line === 'granted waiter')).toHaveLength(2);
    expect(pool.activeCount).toBe(1);
  });
});
