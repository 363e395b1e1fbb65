import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Daemon, type DaemonOptions, startDaemon } from '@tether/daemon';
import { openPostgresStore } from '@tether/store-postgres';
import { type MockTurnContext, createMockProvider } from '@tether/testkit';

/**
 * Daemons in the test's process on one PostgreSQL database, their agent mocked: each turn is held
 * (it stays active) until the test emits its output through `turns`.
 */
export class InProcessDaemons {
  /** Every turn begun, in order, on any of these daemons. */
  readonly turns: MockTurnContext[] = [];
  private readonly started: Daemon[] = [];
  private readonly roots: string[] = [];

  /** A new temporary folder for the test's data dirs and workspace; closeAll removes it. */
  async temporaryRoot(prefix: string): Promise<string> {
    const root = await mkdtemp(path.join(os.tmpdir(), prefix));
    this.roots.push(root);
    return root;
  }

  /** A daemon with its data dir at `<root>/daemon-<name>` and its owner id named for it. */
  async serve(options: {
    readonly root: string;
    readonly database: string;
    readonly name: string;
    readonly logger: DaemonOptions['logger'];
    readonly leaseTtlMs?: number;
    readonly shutdownGraceMs?: number;
  }): Promise<Daemon> {
    const { root, database, name, logger, leaseTtlMs = 2_000, shutdownGraceMs } = options;
    const daemon = await startDaemon({
      dataDir: path.join(root, `daemon-${name}`),
      port: 0,
      providers: [
        createMockProvider({
          turn: (context) => void this.turns.push(context),
          // As an agent does: an interrupted turn ends at once.
          interrupt: (runId, session) => session.emit({ type: 'run.completed', runId, outcome: 'interrupted' }),
        }),
      ],
      logger,
      ...(shutdownGraceMs === undefined ? {} : { shutdownGraceMs }),
      openStore: () => openPostgresStore({ url: database, ownerId: `owner-${name}`, leaseTtlMs }),
    });
    this.started.push(daemon);
    return daemon;
  }

  /**
   * Closes every daemon served, forgets the turns and removes the temporary folders, even when a
   * close fails (then rejects with its error, once every daemon has finished closing).
   */
  async closeAll(): Promise<void> {
    const closes = await Promise.allSettled(this.started.splice(0).map((daemon) => daemon.close()));
    this.turns.length = 0;
    await Promise.all(this.roots.splice(0).map((root) => rm(root, { recursive: true, force: true })));
    const failed = closes.find((close) => close.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
