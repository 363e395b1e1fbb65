import { randomUUID } from 'node:crypto';
import { AgentError } from '@tether/protocol';
import type { DecodedLine } from '../codec/line-decoder.js';
import { ControlChannel } from '../control/control-channel.js';
import { parseCliFrame } from '../frames/cli-frame-schemas.js';
import type { ClaudeProcess, ProcessExit } from './claude-process.js';
import type { PoolMember, ProcessPool } from './process-pool.js';

/** Where a process's output goes; switched when a spare is adopted by a session. */
export interface ProcessRoute {
  onLine(line: DecodedLine): void;
  onExit(exit: ProcessExit): void;
}

/** Starts a claude process for a new conversation with the given id, its output going to `route`. */
export type Launcher = (providerSessionId: string, route: ProcessRoute) => ClaudeProcess;

/** An initialized claude process waiting for a new session with the same launch configuration. */
export interface Spare {
  readonly process: ClaudeProcess;
  readonly control: ControlChannel;
  /** The id it was launched with (--session-id): the adopting session's conversation id. */
  readonly providerSessionId: string;
  /** The pool member that holds its process slot until a session takes it over. */
  readonly member: PoolMember;
  /** From now on its output goes to the adopting session. */
  adopt(route: ProcessRoute): void;
}

/**
 * Keeps `spares` initialized claude processes per launch configuration, so a new session's first
 * turn costs what a warm turn costs instead of a CLI start-up. Spares hold process slots and are
 * the first released when the pool needs room.
 */
export class WarmPool {
  private readonly spares: number;
  private readonly processPool: ProcessPool;
  private readonly ready = new Map<string, Spare[]>();
  private readonly starting = new Map<string, number>();
  /** Sessions waiting for a spare that is still starting, per configuration. */
  private readonly waiting = new Map<string, ((spare: Spare | undefined) => void)[]>();
  private disposed = false;
  /** Spares still starting up: ended at once on dispose, not left to finish. */
  private readonly launching = new Set<ClaudeProcess>();

  constructor(options: { spares: number; processPool: ProcessPool }) {
    this.spares = options.spares;
    this.processPool = options.processPool;
  }

  /** Tops up the spares for a configuration, in the background, only where a process slot is free. */
  prepare(key: string, launch: Launcher): void {
    if (this.disposed) return;
    const wanted = this.spares - (this.ready.get(key)?.length ?? 0) - (this.starting.get(key) ?? 0);
    for (let index = 0; index < wanted; index += 1) void this.startSpare(key, launch);
  }

  /**
   * A spare for the configuration, removed from the pool: a ready one at once, or the next one
   * still starting (its start-up is already under way, so waiting for it beats starting another);
   * undefined when there is none.
   */
  take(key: string): Promise<Spare | undefined> {
    const list = this.ready.get(key);
    const spare = list?.shift();
    if (list && list.length === 0) this.ready.delete(key);
    if (spare || (this.starting.get(key) ?? 0) <= (this.waiting.get(key)?.length ?? 0)) return Promise.resolve(spare);
    return new Promise((resolve) => this.waiting.set(key, [...(this.waiting.get(key) ?? []), resolve]));
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const waiters of this.waiting.values()) for (const waiter of waiters) waiter(undefined);
    this.waiting.clear();
    const all = [...this.ready.values()].flat();
    this.ready.clear();
    const launching = [...this.launching];
    await Promise.allSettled([...all.map((spare) => spare.member.release()), ...launching.map((processHandle) => processHandle.stop({ busy: false }))]);
  }

  private async startSpare(key: string, launch: Launcher): Promise<void> {
    this.starting.set(key, (this.starting.get(key) ?? 0) + 1);
    let route: ProcessRoute | null = null;
    let spare: Spare | null = null;
    const member: PoolMember = {
      // A spare does no work for anyone yet: it is the first to go when the pool needs room.
      canRelease: () => true,
      lastActiveAt: () => 0,
      release: async () => {
        this.forget(key, spare);
        await spare?.process.stop({ busy: false });
      },
    };
    try {
      if (!this.processPool.tryAcquire(member)) return;
      let control: ControlChannel | null = null;
      const providerSessionId = randomUUID();
      const processHandle = launch(providerSessionId, {
        onLine: (line) => (route ? route.onLine(line) : this.onSpareLine(control, line)),
        onExit: (exit) => {
          if (route) return route.onExit(exit);
          this.forget(key, spare);
          this.processPool.release(member);
          control?.cancelAll(new AgentError({ code: 'provider_crashed', message: 'The spare claude process exited.', details: { reason: 'spare_exited' } }));
        },
      });
      control = new ControlChannel({ write: (message) => processHandle.write(message) });
      this.launching.add(processHandle);
      // initialize makes the CLI load everything a first turn needs; its answer means "ready".
      try {
        await control.request('initialize', {}, { timeoutMs: 30_000 });
      } finally {
        this.launching.delete(processHandle);
      }
      spare = {
        process: processHandle,
        control,
        providerSessionId,
        member,
        adopt: (next) => {
          route = next;
        },
      };
      if (this.disposed || !processHandle.running) {
        await member.release();
        return;
      }
      const waiter = this.waiting.get(key)?.shift();
      if (waiter) waiter(spare);
      else this.ready.set(key, [...(this.ready.get(key) ?? []), spare]);
    } catch {
      // A spare that fails to start is simply not there; the session starts its own process.
      this.processPool.release(member);
    } finally {
      this.starting.set(key, (this.starting.get(key) ?? 1) - 1);
      // Whoever still waits with no spare coming starts its own process.
      const stillComing = this.starting.get(key) ?? 0;
      const waiters = this.waiting.get(key) ?? [];
      while (waiters.length > stillComing) waiters.pop()?.(undefined);
    }
  }

  private onSpareLine(control: ControlChannel | null, line: DecodedLine): void {
    if (line.kind !== 'json' || !control) return;
    const frame = parseCliFrame(line.value);
    if (frame.kind === 'control_response') control.handleResponse(frame.frame);
  }

  private forget(key: string, spare: Spare | null): void {
    if (!spare) return;
    const list = this.ready.get(key)?.filter((candidate) => candidate !== spare);
    if (list && list.length > 0) this.ready.set(key, list);
    else this.ready.delete(key);
  }
}
