import { AgentError } from '@tether/protocol';

/** A session as the pool sees it: whether its process could be let go to make room. */
export interface PoolMember {
  /** True when the member has a process that is idle (no turn, no prompt, no background task). */
  canRelease(): boolean;
  /** Stops the member's idle process (the conversation stays resumable). */
  release(): Promise<void>;
  /** When the member's process last did anything, for least-recently-used release. */
  lastActiveAt(): number;
}

interface Waiter {
  readonly member: PoolMember;
  readonly grant: () => void;
}

/**
 * At most `limit` agent processes at once, across a provider's sessions. A session that needs a
 * process when none is free first frees the least recently used idle one; otherwise it waits in a
 * fair (first come, first served) queue, or fails fast when asked to.
 */
export class ProcessPool {
  private readonly limit: number;
  private readonly whenFull: 'queue' | 'fail';
  private readonly holders = new Set<PoolMember>();
  private readonly members = new Set<PoolMember>();
  private readonly waiters: Waiter[] = [];

  constructor(options: { limit: number; whenFull: 'queue' | 'fail' }) {
    this.limit = Math.max(1, options.limit);
    this.whenFull = options.whenFull;
  }

  register(member: PoolMember): void {
    this.members.add(member);
  }

  unregister(member: PoolMember): void {
    this.members.delete(member);
    this.release(member);
    const index = this.waiters.findIndex((waiter) => waiter.member === member);
    if (index >= 0) this.waiters.splice(index, 1);
  }

  /**
   * A process slot for `member`. `onQueued` is told the queue position when it has to wait.
   * Rejects with capacity_exceeded when full and the pool fails fast.
   */
  async acquire(member: PoolMember, onQueued: (position: number) => void): Promise<void> {
    if (this.holders.has(member)) return;
    if (this.holders.size < this.limit && this.waiters.length === 0) {
      this.holders.add(member);
      return;
    }
    if (await this.releaseIdle(member)) {
      this.holders.add(member);
      return;
    }
    if (this.whenFull === 'fail') {
      throw new AgentError({
        code: 'capacity_exceeded',
        message: `All ${this.limit} agent processes are busy. Retry when a run has finished, or raise the process limit.`,
        details: { reason: 'process_limit' },
      });
    }
    onQueued(this.waiters.length);
    await new Promise<void>((grant) => this.waiters.push({ member, grant }));
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
    if (!this.holders.delete(member)) return;
    const next = this.waiters.shift();
    if (!next) return;
    this.holders.add(next.member);
    next.grant();
  }

  get activeCount(): number {
    return this.holders.size;
  }

  private async releaseIdle(requester: PoolMember): Promise<boolean> {
    const idle = [...this.holders].filter((member) => member !== requester && member.canRelease()).sort((a, b) => a.lastActiveAt() - b.lastActiveAt());
    const victim = idle[0];
    if (!victim) return false;
    this.holders.delete(victim);
    await victim.release();
    return this.holders.size < this.limit;
  }
}
