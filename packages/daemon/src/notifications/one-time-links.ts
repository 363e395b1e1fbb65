import { createHash, randomBytes } from 'node:crypto';

export type LinkChoice = 'approve' | 'deny';

/** What a one-time link answers, and what its page may show (nothing a notification did not already carry). */
export interface LinkTarget {
  readonly sessionId: string;
  readonly interactionRef: string;
  readonly tool: string;
  readonly summary: string | null;
  /**
   * What the call would do, from the tool's input (a command, a path, else the input as JSON), for
   * the link's own page only: a notification never carries it, and only the link's holder sees it.
   */
  readonly action: string | null;
}

export interface LinkGrant extends LinkTarget {
  readonly choice: LinkChoice;
  readonly expiresAt: number;
}

/** 32 random bytes, base64url: 256 bits, far past guessing. */
export const linkTokenPattern = /^[A-Za-z0-9_-]{43}$/;

// Far more than people answer in an hour; past it the oldest links go first, so memory stays bounded.
const maxGrants = 10_000;

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * The one-time links of open interactions, in memory only (a restarted daemon's links are void, as
 * are the interactions they answered). Only each token's SHA-256 is kept, so nothing here can be
 * turned back into a working link. Using one link of an interaction voids its others: the first
 * answer wins, whichever link or client gave it.
 */
export class OneTimeLinks {
  private readonly grants = new Map<string, LinkGrant>();
  private readonly byInteraction = new Map<string, Set<string>>();

  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(ttlMs: number, now: () => number = Date.now) {
    this.ttlMs = ttlMs;
    this.now = now;
  }

  get size(): number {
    return this.grants.size;
  }

  /** A new token for one choice on one interaction; only its hash is kept. */
  mint(target: LinkTarget, choice: LinkChoice): string {
    this.pruneExpired();
    while (this.grants.size >= maxGrants) this.remove(this.grants.keys().next().value as string);
    const token = randomBytes(32).toString('base64url');
    const hash = hashOf(token);
    this.grants.set(hash, { ...target, choice, expiresAt: this.now() + this.ttlMs });
    let hashes = this.byInteraction.get(target.interactionRef);
    if (hashes === undefined) {
      hashes = new Set();
      this.byInteraction.set(target.interactionRef, hashes);
    }
    hashes.add(hash);
    return token;
  }

  /** What a token would answer, without using it (for the confirmation page); null when unknown, used or expired. */
  peek(token: string): LinkGrant | null {
    if (!linkTokenPattern.test(token)) return null;
    const hash = hashOf(token);
    const grant = this.grants.get(hash);
    if (grant === undefined) return null;
    if (grant.expiresAt <= this.now()) {
      this.remove(hash);
      return null;
    }
    return grant;
  }

  /** Uses a token: returns what it answers and voids every link of its interaction. Synchronous, so two uses cannot both win. */
  take(token: string): LinkGrant | null {
    const grant = this.peek(token);
    if (grant !== null) this.drop(grant.interactionRef);
    return grant;
  }

  /** Voids an interaction's links (it settled, was withdrawn or cancelled). */
  drop(interactionRef: string): void {
    for (const hash of this.byInteraction.get(interactionRef) ?? []) this.grants.delete(hash);
    this.byInteraction.delete(interactionRef);
  }

  private remove(hash: string): void {
    const grant = this.grants.get(hash);
    this.grants.delete(hash);
    if (grant === undefined) return;
    const hashes = this.byInteraction.get(grant.interactionRef);
    hashes?.delete(hash);
    if (hashes?.size === 0) this.byInteraction.delete(grant.interactionRef);
  }

  private pruneExpired(): void {
    const now = this.now();
    // Grants are inserted with one TTL, so the map's order is their expiry order.
    for (const [hash, grant] of this.grants) {
      if (grant.expiresAt > now) break;
      this.remove(hash);
    }
  }
}
