import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import type { ClaudeConnection, ConnectionListener } from '../connection/claude-connection.js';
import { createCreatorNamedFolder } from '../process/creator-named-folders.js';
import { type CpuTicksReader, readCpuTicks, watchCpuProgress } from './cpu-progress.js';
import type { PoolMember, ProcessPool } from './process-pool.js';

/** What a spare is started with: its conversation id and, for parked spares, the neutral folder it waits in. */
export interface SpareLaunch {
  readonly providerSessionId: string;
  /** The pool's own empty folder (parked spares only; null otherwise). */
  readonly parkingFolder: string | null;
}

/** Starts a spare's connection for a new conversation, its output going to `listener`. */
export type Launcher = (spare: SpareLaunch, listener: ConnectionListener) => ClaudeConnection;

/** An initialized agent connection waiting for a new session with the same launch configuration. */
export interface Spare {
  readonly connection: ClaudeConnection;
  /** The id it was launched with (--session-id): the adopting session's conversation id. */
  readonly providerSessionId: string;
  /** The pool member that holds its process slot until a session takes it over. */
  readonly member: PoolMember;
  /** From now on its output goes to the adopting session. */
  adopt(listener: ConnectionListener): void;
  /**
   * Calls `onStalled` once its process used no CPU over one look (`spareProgressCheckMs`): hung,
   * e.g. while a claim waits for its answer (cpu-progress.ts). Returns the function that ends the watch.
   */
  watchProgress(onStalled: () => void): () => void;
}

/** Where parked spares wait; named for their creator, so a later host can remove a killed one's. */
export const parkingFolderPrefix = 'tether-spares-';

/**
 * How often a session waiting on a spare looks at its progress (cpu-progress.ts): one still starting
 * (a starting claude works the CPU, about a second of it), or a parked one answering its claim. One
 * that used no CPU at all since the last look (stopped, or blocked) is taken for hung, and the session
 * starts cold rather than wait out the spare's 30 s initialize (or claim) bound. A starting spare is
 * not stopped: if it becomes ready after all, the next session takes it. A claimed one is (spare-claim.ts).
 */
export const spareProgressCheckMs = 2_000;

/** The diagnostic of a session that stopped waiting for a spare still starting that made no progress. */
export const spareNotReadyDiagnostic = 'claude.spare_not_ready';

/**
 * Keeps `spares` initialized claude processes per launch configuration, so a new session's first
 * turn costs what a warm turn costs instead of a CLI start-up. Spares hold process slots and are
 * the first released when the pool needs room. With `parking`, spares wait in one empty folder the
 * pool owns (created with the first spare, removed at dispose) until a session claims one for its own.
 */
export class WarmPool {
  private readonly spares: number;
  private readonly processPool: ProcessPool;
  private readonly parking: boolean;
  private parkingFolder: Promise<string> | null = null;
  private readonly ready = new Map<string, Spare[]>();
  private readonly starting = new Map<string, number>();
  /** Sessions waiting for a spare that is still starting, per configuration. */
  private readonly waiting = new Map<string, ((spare: Spare | undefined) => void)[]>();
  private disposed = false;
  /** Spares still starting up, with their configuration: ended at once on dispose, not left to finish. */
  private readonly launching = new Map<ClaudeConnection, string>();
  private readonly spareProgressCheckMs: number;
  private readonly cpuTicksOf: CpuTicksReader;

  /** Whether spares wait parked and are claimed for the taking session's folder. */
  get parks(): boolean {
    return this.parking;
  }

  constructor(options: {
    spares: number;
    processPool: ProcessPool;
    parking?: boolean;
    spareProgressCheckMs?: number;
    /** The CPU a process has used (/proc); a unit test's stand-in. */
    cpuTicksOf?: CpuTicksReader;
  }) {
    this.spares = options.spares;
    this.processPool = options.processPool;
    this.parking = options.parking ?? false;
    this.spareProgressCheckMs = options.spareProgressCheckMs ?? spareProgressCheckMs;
    this.cpuTicksOf = options.cpuTicksOf ?? readCpuTicks;
  }

  /** Tops up the spares for a configuration, in the background, only where a process slot is free. */
  prepare(key: string, launch: Launcher): void {
    if (this.disposed) return;
    const wanted = this.spares - (this.ready.get(key)?.length ?? 0) - (this.starting.get(key) ?? 0);
    for (let index = 0; index < wanted; index += 1) void this.startSpare(key, launch);
  }

  /**
   * A spare for the configuration, removed from the pool: a ready one at once, or the next one
   * still starting while it makes progress (its start-up is already under way, so waiting for it
   * beats starting another); undefined when there is none. When no spare of the configuration used
   * any CPU between two looks, `spareProgressCheckMs` apart, the wait ends, told through `onSkipped`
   * (a diagnostic code for the session), and when `signal` aborts (the session stopped) it ends
   * with nothing. Where progress cannot be read (no /proc, no pid yet) the wait is the spare's own
   * start-up bound.
   */
  take(
    key: string,
    options: { onSkipped?: (diagnostic: string) => void; signal?: AbortSignal } = {},
  ): Promise<Spare | undefined> {
    const spare = this.takeReady(key);
    if (spare || (this.starting.get(key) ?? 0) <= (this.waiting.get(key)?.length ?? 0) || options.signal?.aborted)
      return Promise.resolve(spare);
    return new Promise((resolve) => {
      const waiter = (taken: Spare | undefined) => {
        stopWatching();
        options.signal?.removeEventListener('abort', abandon);
        resolve(taken);
      };
      /** Leaves the queue with nothing: the spare then goes to the next one waiting, or stays ready. */
      const leave = (): boolean => {
        const waiters = this.waiting.get(key) ?? [];
        const index = waiters.indexOf(waiter);
        if (index < 0) return false;
        waiters.splice(index, 1);
        if (waiters.length === 0) this.waiting.delete(key);
        return true;
      };
      const abandon = (): void => {
        if (!leave()) return;
        stopWatching();
        resolve(undefined);
      };
      const stopWatching = watchCpuProgress({
        checkMs: this.spareProgressCheckMs,
        ticks: () => this.startingCpuTicks(key),
        onStalled: () => {
          if (!leave()) return;
          options.signal?.removeEventListener('abort', abandon);
          options.onSkipped?.(spareNotReadyDiagnostic);
          resolve(undefined);
        },
      });
      options.signal?.addEventListener('abort', abandon, { once: true });
      this.waiting.set(key, [...(this.waiting.get(key) ?? []), waiter]);
    });
  }

  /** A ready spare for the configuration, removed from the pool; undefined when none is ready. */
  private takeReady(key: string): Spare | undefined {
    const list = this.ready.get(key);
    const spare = list?.shift();
    if (list && list.length === 0) this.ready.delete(key);
    return spare;
  }

  /** The CPU the configuration's starting spares have used, in clock ticks; undefined when one cannot be read. */
  private startingCpuTicks(key: string): number | undefined {
    let total = 0;
    for (const [connection, launchedFor] of this.launching) {
      if (launchedFor !== key) continue;
      const pid = connection.process?.pid;
      const ticks = pid === undefined ? undefined : this.cpuTicksOf(pid);
      if (ticks === undefined) return undefined;
      total += ticks;
    }
    return total;
  }

  /**
   * Ends every spare, ready or still starting. `force` (a host that must exit now): SIGKILL at once,
   * never the graceful EOF-then-SIGTERM path, whose graces a hung spare (stopped, or never answering)
   * would make the host wait out.
   */
  async dispose(options: { force?: boolean } = {}): Promise<void> {
    this.disposed = true;
    for (const waiters of this.waiting.values()) for (const waiter of waiters) waiter(undefined);
    this.waiting.clear();
    const all = [...this.ready.values()].flat();
    this.ready.clear();
    const launching = [...this.launching.keys()];
    const force = options.force === true;
    await Promise.allSettled([
      // Its slot goes back at its end, as a release's would (onEnd).
      ...all.map((spare) => (force ? spare.connection.stop({ busy: false, force }) : spare.member.release())),
      ...launching.map((connection) => connection.stop({ busy: false, force })),
    ]);
    // Only once no spare waits in it: a claimed one has moved to its session's folder.
    const parkingFolder = await this.parkingFolder?.catch(() => null);
    if (parkingFolder) await rm(parkingFolder, { recursive: true, force: true });
  }

  /** The parking folder, made once: empty, so a claim finds no project settings, agents or CLAUDE.md of its own. */
  private parkingFolderPath(): Promise<string> {
    this.parkingFolder ??= createCreatorNamedFolder(parkingFolderPrefix);
    return this.parkingFolder;
  }

  private async startSpare(key: string, launch: Launcher): Promise<void> {
    this.starting.set(key, (this.starting.get(key) ?? 0) + 1);
    let adopted: ConnectionListener | null = null;
    let spare: Spare | null = null;
    const member: PoolMember = {
      // A ready spare does no work for anyone yet: it is the first to go when the pool needs room.
      // One still starting cannot be stopped through release (there is no spare to stop yet): it keeps its slot until ready.
      canRelease: () => spare !== null,
      lastActiveAt: () => 0,
      release: async () => {
        this.forget(key, spare);
        await spare?.connection.stop({ busy: false });
      },
    };
    let launched: ClaudeConnection | null = null;
    try {
      if (!this.processPool.tryAcquire(member)) return;
      const providerSessionId = randomUUID();
      const parkingFolder = this.parking ? await this.parkingFolderPath() : null;
      if (this.disposed) {
        this.processPool.release(member);
        return;
      }
      // Until a session adopts it, a spare has no turn: its frames mean nothing and a prompt cannot be one of ours.
      const connection: ClaudeConnection = launch(
        { providerSessionId, parkingFolder },
        {
          onFrame: (frame) => adopted?.onFrame(frame),
          onNote: (code) => adopted?.onNote(code),
          onPrompt: (requestId, request) =>
            adopted
              ? adopted.onPrompt(requestId, request)
              : void connection.answerPrompt(requestId, { behavior: 'deny', message: 'No turn is active.' }),
          onPromptWithdrawn: (requestId) => adopted?.onPromptWithdrawn(requestId),
          onInputFailed: () => adopted?.onInputFailed(),
          onEnd: (ending) => {
            if (adopted) return adopted.onEnd(ending);
            this.forget(key, spare);
            this.processPool.release(member);
          },
        },
      );
      launched = connection;
      this.launching.set(connection, key);
      // initialize makes the CLI load everything a first turn needs; its answer means "ready".
      try {
        await connection.request({ subtype: 'initialize' }, { timeoutMs: 30_000 });
      } finally {
        this.launching.delete(connection);
      }
      spare = {
        connection,
        providerSessionId,
        member,
        adopt: (listener) => {
          adopted = listener;
        },
        watchProgress: (onStalled) =>
          watchCpuProgress({
            checkMs: this.spareProgressCheckMs,
            ticks: () => {
              const pid = connection.process?.pid;
              return pid === undefined ? undefined : this.cpuTicksOf(pid);
            },
            onStalled,
          }),
      };
      if (this.disposed || !connection.running) {
        await member.release();
        return;
      }
      const waiter = this.waiting.get(key)?.shift();
      if (waiter) waiter(spare);
      else {
        this.ready.set(key, [...(this.ready.get(key) ?? []), spare]);
        // A session waiting for a process needs this slot more than a spare does.
        this.processPool.offerIdle();
      }
    } catch {
      // A spare that fails to start is simply not there; the session starts its own process. One whose
      // process still runs (hung while starting, or it refused initialize) is killed first: nothing
      // else would ever stop it, not even dispose, and it would run on outside the process limit.
      await launched?.stop({ busy: false, force: true }).catch(() => undefined);
      this.processPool.release(member);
    } finally {
      this.starting.set(key, (this.starting.get(key) ?? 1) - 1);
      // Whoever still waits with no spare coming starts its own process.
      const stillComing = this.starting.get(key) ?? 0;
      const waiters = this.waiting.get(key) ?? [];
      while (waiters.length > stillComing) waiters.pop()?.(undefined);
    }
  }

  private forget(key: string, spare: Spare | null): void {
    if (!spare) return;
    const list = this.ready.get(key)?.filter((candidate) => candidate !== spare);
    if (list && list.length > 0) this.ready.set(key, list);
    else this.ready.delete(key);
  }
}
