import type { StoreHealth } from '@tether/runtime';
import { connectionHint } from './connection-hints.js';
import { describeCause } from './store-failure.js';

/**
 * Whether the store reaches its server, from its heartbeat's renewals (heartbeat.ts): the last one
 * failed, or none has landed for two beats (one hangs on a connection that was cut off). Kept from
 * work the store does anyway, so asking costs no query: a load balancer may ask at every request.
 */
export class ConnectionHealth {
  #lastSuccessAt: number;
  /** The failure since the last success, and when it began. */
  #failure: { readonly error: unknown; readonly since: number } | undefined;

  /** How long without a landed renewal counts as unresponsive: two heartbeat intervals. */
  readonly #silenceMs: number;

  constructor(silenceMs: number) {
    this.#silenceMs = silenceMs;
    this.#lastSuccessAt = Date.now();
  }

  succeeded(): void {
    this.#lastSuccessAt = Date.now();
    this.#failure = undefined;
  }

  failed(error: unknown): void {
    this.#failure = { error, since: this.#failure?.since ?? Date.now() };
  }

  report(): StoreHealth {
    if (this.#failure !== undefined) {
      const cause = describeCause(this.#failure.error);
      return {
        ok: false,
        reason: 'store_unreachable',
        ...(cause ? { cause } : {}),
        message: `The store cannot reach its PostgreSQL server${cause ? ` (${cause})` : ''}. ${connectionHint(this.#failure.error)}`,
        since: new Date(this.#failure.since).toISOString(),
      };
    }
    const silentFor = Date.now() - this.#lastSuccessAt;
    if (silentFor <= this.#silenceMs) return { ok: true };
    return {
      ok: false,
      reason: 'store_unresponsive',
      message: `The PostgreSQL server has not answered the store's heartbeat for ${Math.round(silentFor / 1000)} s: check the server's load and the network to it.`,
      since: new Date(this.#lastSuccessAt + this.#silenceMs).toISOString(),
    };
  }
}
