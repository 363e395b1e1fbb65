import { AgentError } from '@tether/protocol';

/** A session as the pool sees it: whether its process could be let go to make room. */
export interface PoolMember {
  /** True when the member has a process that is idle (no turn, no prompt, no background task). */
  canRelease(): boolean;
  /**
   * Stops the member's idle process (the conversation stays resumable). From the call on, that
   * process takes nothing more: a turn arriving meanwhile waits for the stop and asks for a slot again.
   */
  release(): Promise<void>;
  /** When the member's process last did anything, for least-recently-used release. */
  lastActiveAt(): number;
}

interface Waiter {
  readonly member: PoolMember;
  readonly grant: (granted: boolean) => void;
}

/**
 * At most `limit` agent processes at once, across a provider's sessions. Whoever needs a process
 * gets a free slot, or else the slot of the least recently used idle holder (its process is stopped
 * first); otherwise it waits in a first come, first served queue, or fails fast when asked to. A
 * waiter is served the moment a slot frees up or a holder goes idle, never later: an idle process
 * is only worth keeping while nobody waits for its slot.
 */
export class ProcessPool {
  private readonly limit: number;
  private readonly whenFull: 'queue' | 'fail';
  private readonly holders = new Set<PoolMember>();
  private readonly members = new Set<PoolMember>();
  private readonly waiters: Waiter[] = [];
  /** The last grant handed out: each waiter starts after the one before it, whatever stops first. */
  private granting: Promise<void> = Promise.resolve();
  /** Holders whose grant waits for an idle holder's process to stop: their slot is not theirs to use yet. */
  private readonly pendingGrants = new Map<PoolMember, Promise<void>>();

  constructor(options: { limit: number; whenFull: 'queue' | 'fail' }) {
    this.limit = Math.max(1, options.limit);
    this.whenFull = options.whenFull;
  }

  register(member: PoolMember): void {
    this.members.add(member);
  }

  unregister(member: PoolMember): void {
    this.members.delete(member);
    for (const waiter of this.waiters.filter((queued) => queued.member === member)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.grant(false);
    }
    this.release(member);
  }

  /**
   * A process slot for `member`: true once it holds one. `onQueued` is told the queue position (0 =
   * next) when it has to wait for a busy process. `withdraw` aborting takes the wait out of the queue
   * (its turn ended meanwhile): false, and nobody behind it is counted behind it any more. Rejects with
   * capacity_exceeded when full and the pool fails fast.
   */
  async acquire(member: PoolMember, onQueued: (position: number) => void, withdraw?: AbortSignal): Promise<boolean> {
    if (this.holders.has(member)) {
      // Held, or about to be once an idle holder's process has stopped: the member's process may start only then.
      await this.pendingGrants.get(member);
      return true;
    }
    if (withdraw?.aborted) return false;
    let waiter: Waiter | undefined;
    const granted = new Promise<boolean>((grant) => {
      waiter = { member, grant };
    });
    this.waiters.push(waiter!);
    this.handOut();
    const position = this.waiters.indexOf(waiter!);
    if (position >= 0) {
      if (this.whenFull === 'fail') {
        this.waiters.splice(position, 1);
        throw new AgentError({
          code: 'capacity_exceeded',
          message: `All ${this.limit} agent processes are busy. Retry when a run has finished, or raise the process limit.`,
          details: { reason: 'process_limit' },
        });
      }
      onQueued(position);
      withdraw?.addEventListener(
        'abort',
        () => {
          const index = this.waiters.indexOf(waiter!);
          if (index < 0) return;
          this.waiters.splice(index, 1);
          waiter!.grant(false);
        },
        { once: true },
      );
    }
    return granted;
  }

  /** A slot only if one is free right now (no waiting, no releasing others): for optional work like spares. */
  tryAcquire(member: PoolMember): boolean {
    if (this.holders.has(member)) return true;
    if (this.holders.size >= this.limit || this.waiters.length > 0) return false;
    this.members.add(member);
    this.holders.add(member);
    return true;
  }

  /** Hands a held slot over (a spare process adopted by a session). */
  transfer(from: PoolMember, to: PoolMember): void {
    if (!this.holders.delete(from)) return;
    this.members.delete(from);
    this.holders.add(to);
  }

  /** The member's process ended: its slot goes to the first waiter. */
  release(member: PoolMember): void {
    if (this.holders.delete(member)) this.handOut();
  }

  /** A holder has nothing left to do: if anyone waits, the least recently used idle process makes room. */
  offerIdle(): void {
    this.handOut();
  }

  get activeCount(): number {
    return this.holders.size;
  }

  get queuedCount(): number {
    return this.waiters.length;
  }

  /**
   * Serves waiters in order: a free slot at once; else an idle holder's slot, granted once its
   * process has stopped (the waiter holds the slot meanwhile, so nobody else counts it as free).
   */
  private handOut(): void {
    while (this.waiters.length > 0) {
      let stopped: Promise<unknown> = Promise.resolve();
      if (this.holders.size >= this.limit) {
        const victim = this.leastRecentlyUsedIdle();
        if (!victim) return;
        // Chosen and told in one step: no turn can reach the victim's process in between.
        this.holders.delete(victim);
        // A release that fails still ended the process's claim on the slot: the waiter goes ahead.
        stopped = victim.release().catch(() => undefined);
      }
      const next = this.waiters.shift()!;
      this.holders.add(next.member);
      const grant = Promise.all([this.granting, stopped]).then(() => next.grant(true));
      this.granting = grant;
      this.pendingGrants.set(next.member, grant);
      void grant.then(() => {
        if (this.pendingGrants.get(next.member) === grant) this.pendingGrants.delete(next.member);
      });
    }
  }

  private leastRecentlyUsedIdle(): PoolMember | undefined {
    let oldest: PoolMember | undefined;
    for (const member of this.holders) {
      if (member.canRelease() && (oldest === undefined || member.lastActiveAt() < oldest.lastActiveAt()))
        oldest = member;
    }
    return oldest;
  }
}
