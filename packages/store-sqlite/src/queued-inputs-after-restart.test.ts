import { createAgentRuntime } from '@tether/runtime';
import { createMockProvider, waitForEvent } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { dataDirectoryPerTest } from './__fixtures__/temporary-directory.js';
import { openSqliteStore } from './index.js';

const directories = dataDirectoryPerTest();

describe('queued follow-ups over SQLite', () => {
  it('are stored with the session, and a restarted runtime cancels them (runtime_restarted) instead of running them', async () => {
    // The first runtime's turn never ends: it is still running when the runtime stops.
    const first = createMockProvider({ turn: () => undefined });
    const before = await createAgentRuntime({
      providers: [first],
      store: await openSqliteStore({ dataDir: directories.dataDir }),
    });
    const { sessionId } = await before.openSession({ workspace: { kind: 'directory', path: directories.workspace } });
    const running = await before.submitTurn({ sessionId, input: [{ type: 'text', text: 'long task' }] });
    const queued = await before.submitTurn({
      sessionId,
      input: [{ type: 'text', text: 'then this' }],
      delivery: 'after_turn',
    });
    await before.shutdown({ graceMs: 0 });

    const store = await openSqliteStore({ dataDir: directories.dataDir });
    expect((await store.getSession(sessionId))?.queuedInputs).toEqual([
      expect.objectContaining({
        inputId: queued.inputId,
        runId: queued.runId,
        delivery: 'after_turn',
        preview: 'then this',
      }),
    ]);
    const second = createMockProvider();
    const after = await createAgentRuntime({ providers: [second], store });
    try {
      const cancelled = await waitForEvent(after, sessionId, 'input.cancelled');
      expect(cancelled).toMatchObject({ inputId: queued.inputId, runId: queued.runId, reason: 'runtime_restarted' });
      const snapshot = await after.getSession(sessionId);
      expect(snapshot.queuedInputs).toEqual([]);
      expect(snapshot.state).toBe('idle');
      const events = await after.readEvents(sessionId);
      expect(events.filter((event) => event.type === 'run.started').map((event) => event.runId)).toEqual([
        running.runId,
      ]);
      expect(second.sessions.flatMap((session) => session.turns)).toEqual([]);
      // The session goes on normally.
      const next = await after.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
      expect((await after.waitForRun(next.runId)).outcome).toBe('succeeded');
    } finally {
      await after.shutdown();
    }
  });
});
