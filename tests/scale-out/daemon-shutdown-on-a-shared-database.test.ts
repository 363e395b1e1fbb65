import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { SubmitTurnReceipt } from '@tether/protocol';
import { recordingLogger, useTestPostgres } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { client, openSession } from '../daemon/daemon-test-helpers.js';
import { InProcessDaemons } from './in-process-daemons.js';

// Daemons in this process on one real PostgreSQL database, their agents mocked (the test ends their turns).
const server = useTestPostgres();
const daemons = new InProcessDaemons();
let root = '';
afterEach(async () => {
  await daemons.closeAll();
});

describe('a daemon stopping beside others on one database', () => {
  it("waits for its own runs only: another daemon's running turn neither delays its close nor is stopped by it", async () => {
    root = await daemons.temporaryRoot('tether-shared-stop-');
    const directory = path.join(root, 'workspace');
    await mkdir(directory);
    const database = await server().createDatabase();
    const a = await daemons.serve({ root, database, name: 'a', logger: recordingLogger().logger });
    const { logger, lines } = recordingLogger();
    const b = await daemons.serve({ root, database, name: 'b', logger, shutdownGraceMs: 60_000 });
    const api = client(a);
    const sessionId = await openSession(api, directory);
    const { runId } = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'held' }],
    });
    await expect.poll(() => daemons.turns.length, { timeout: 5_000, interval: 20 }).toBe(1);
    expect(await b.runtime.listSessions({ state: 'running' })).toMatchObject([{ sessionId, activeRunId: runId }]);

    await b.close();
    expect(lines.map((line) => line.message)).not.toContain('waiting for active runs to finish');
    const [turn] = daemons.turns;
    expect(turn?.session.interrupts).toEqual([]);
    turn?.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
    expect(await a.runtime.waitForRun(runId)).toMatchObject({ status: 'completed', outcome: 'succeeded' });
  });
});
