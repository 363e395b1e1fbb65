import { AgentError } from '@tether/protocol';
import { createInMemoryStore } from '../store/in-memory-store.js';
import type { AppendNotice, SessionCoordination } from '../store/session-coordination.js';
import type { CommitUnit, TetherStore } from '../store/tether-store.js';

interface Lease {
  ownerId: string;
  token: number;
}

/**
 * A double of a store several runtimes share (what store-postgres does on a real database, kept in
 * memory for the runtime's unit tests): one in-memory store under every runtime's view of it, leases
 * with fencing tokens checked at commit, append notices to every listener after a commit, and
 * runtimes the test can make stop renewing (`stall`) and notice lost leases (`heartbeat`).
 */
export class SharedStoreDouble {
  private readonly rows = createInMemoryStore();
  readonly leases = new Map<string, Lease>();
  private readonly owners = new Map<
    string,
    {
      alive: boolean;
      address: string | null;
      held: Map<string, number>;
      lost: Set<(sessionIds: readonly string[]) => void>;
    }
  >();
  private readonly appendListeners = new Set<(notice: AppendNotice | 'resync') => void>();
  private readonly deletionListeners = new Set<(sessionId: string) => void>();
  /** While true, append notices are lost (a broken notification connection). */
  muted = false;
  /** Every commit refused for a lost lease, by owner and sessions. */
  readonly refused: { ownerId: string; sessionIds: string[] }[] = [];

  /** The store a runtime with this owner id opens. */
  storeFor(ownerId: string, sweepIntervalMs = 20): TetherStore {
    const owner = {
      alive: true,
      address: null as string | null,
      held: new Map<string, number>(),
      lost: new Set<(sessionIds: readonly string[]) => void>(),
    };
    this.owners.set(ownerId, owner);
    const rows = this.rows;
    const coordination: SessionCoordination = {
      ownerId,
      sweepIntervalMs,
      claim: async (sessionId) => {
        const lease = this.leases.get(sessionId);
        if (lease && lease.ownerId !== ownerId && this.owners.get(lease.ownerId)?.alive) {
          return {
            status: 'held_elsewhere',
            holder: { ownerId: lease.ownerId, address: this.owners.get(lease.ownerId)?.address ?? null },
          };
        }
        const token = lease === undefined ? 1 : lease.ownerId === ownerId ? lease.token : lease.token + 1;
        this.leases.set(sessionId, { ownerId, token });
        owner.held.set(sessionId, token);
        return { status: 'claimed' };
      },
      release: async (sessionIds) => {
        for (const sessionId of sessionIds) {
          owner.held.delete(sessionId);
          if (this.leases.get(sessionId)?.ownerId === ownerId) this.leases.delete(sessionId);
        }
      },
      findOrphans: async () =>
        (await rows.loadOpenSessions())
          .map((record) => record.sessionId)
          .filter((sessionId) => {
            const lease = this.leases.get(sessionId);
            return lease === undefined || (lease.ownerId !== ownerId && !this.owners.get(lease.ownerId)?.alive);
          }),
      findOwn: async () =>
        (await rows.loadOpenSessions())
          .map((record) => record.sessionId)
          .filter((sessionId) => this.leases.get(sessionId)?.ownerId === ownerId),
      onAppended: (listener) => {
        this.appendListeners.add(listener);
        return () => this.appendListeners.delete(listener);
      },
      onDeleted: (listener) => {
        this.deletionListeners.add(listener);
        return () => this.deletionListeners.delete(listener);
      },
      onLost: (listener) => {
        owner.lost.add(listener);
        return () => owner.lost.delete(listener);
      },
      advertise: async (address) => {
        owner.address = address;
      },
    };
    const fence = (sessionIds: readonly string[]) => {
      const lost: string[] = [];
      for (const sessionId of sessionIds) {
        const lease = this.leases.get(sessionId);
        if (lease === undefined) {
          this.leases.set(sessionId, { ownerId, token: 1 });
          owner.held.set(sessionId, 1);
        } else if (lease.ownerId !== ownerId || (owner.held.get(sessionId) ?? lease.token) !== lease.token) {
          lost.push(sessionId);
        }
      }
      if (lost.length === 0) return;
      this.refused.push({ ownerId, sessionIds: lost });
      for (const sessionId of lost) owner.held.delete(sessionId);
      throw new AgentError({
        code: 'store_failure',
        message: 'Another runtime took the session over; nothing was written.',
        details: { reason: 'lease_lost', sessionIds: lost },
      });
    };
    return new Proxy(rows, {
      get: (target, property, receiver) => {
        if (property === 'coordination') return coordination;
        if (property === 'commit')
          return async (unit: CommitUnit) => {
            fence(sessionsOf(unit));
            await target.commit(unit);
            const last = new Map<string, number>();
            for (const event of unit.events) last.set(event.sessionId, event.seq);
            // Delivered after the commit, as PostgreSQL delivers a NOTIFY.
            setImmediate(() => {
              if (this.muted) return;
              for (const [sessionId, seq] of last)
                for (const listener of this.appendListeners) listener({ sessionId, seq });
            });
          };
        if (property === 'deleteSession')
          return async (sessionId: string) => {
            fence([sessionId]);
            await target.deleteSession(sessionId);
            this.leases.delete(sessionId);
            setImmediate(() => {
              if (this.muted) return;
              for (const listener of this.deletionListeners) listener(sessionId);
            });
          };
        if (property === 'close')
          return async () => {
            for (const sessionId of owner.held.keys())
              if (this.leases.get(sessionId)?.ownerId === ownerId) this.leases.delete(sessionId);
            owner.held.clear();
            this.owners.delete(ownerId);
          };
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
  }

  /** The runtime stops renewing (a dead machine, for the others): its leases may be taken. */
  stall(ownerId: string): void {
    this.owners.get(ownerId)!.alive = false;
  }

  /** The runtime renews again and, as its heartbeat would, finds the leases it lost. */
  heartbeat(ownerId: string): void {
    const owner = this.owners.get(ownerId)!;
    owner.alive = true;
    const lost = [...owner.held].flatMap(([sessionId, token]) => {
      const lease = this.leases.get(sessionId);
      return lease?.ownerId === ownerId && lease.token === token ? [] : [sessionId];
    });
    for (const sessionId of lost) owner.held.delete(sessionId);
    if (lost.length > 0) for (const listener of owner.lost) listener(lost);
  }

  /** Notices may have been missed (the listening connection came back). */
  resync(): void {
    for (const listener of this.appendListeners) listener('resync');
  }
}

function sessionsOf(unit: CommitUnit): string[] {
  const ids = new Set<string>();
  for (const { sessionId } of [...unit.events, ...unit.sessions, ...unit.runs, ...unit.interactions, ...unit.blobs])
    ids.add(sessionId);
  return [...ids];
}
