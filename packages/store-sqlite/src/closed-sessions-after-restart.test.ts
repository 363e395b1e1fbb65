import type { ProtocolEvent, SessionSnapshot } from '@tether/protocol';
import { type AgentRuntime, createAgentRuntime, newestFirst } from '@tether/runtime';
import { describe, expect, it } from 'vitest';
import { agentErrorOf, collectUntil, createMockProvider } from '@tether/testkit';
import { dataDirectoryPerTest } from './__fixtures__/temporary-directory.js';
import { openSqliteStore } from './index.js';

const directories = dataDirectoryPerTest();

async function startRuntime(): Promise<AgentRuntime> {
  return createAgentRuntime({
    providers: [createMockProvider()],
    store: await openSqliteStore({ dataDir: directories.dataDir }),
    closedSessionCacheSize: 10,
  });
}

/** Every session, read page by page as the daemon does (a page's last session continues the listing). */
async function everyPage(runtime: AgentRuntime, options: { state?: SessionSnapshot['state'] } = {}): Promise<string[]> {
  const ids: string[] = [];
  for (let before: SessionSnapshot | undefined; ; ) {
    const page = await runtime.listSessions({ ...options, limit: 25, ...(before ? { before } : {}) });
    ids.push(...page.map((session) => session.sessionId));
    if (page.length < 25) return ids;
    before = page.at(-1);
  }
}

const types = (events: readonly ProtocolEvent[]) => events.map((event) => `${event.seq} ${event.type}`);
const closedHistory = [
  '1 session.opened',
  '2 run.started',
  '3 run.message_delta',
  '4 run.completed',
  '5 session.closed',
];

describe('many closed sessions over SQLite', () => {
  it('stay listed in order, readable, reopenable with their history and deletable, before and after a restart', async () => {
    let runtime = await startRuntime();
    const opened: string[] = [];
    for (let index = 0; index < 300; index += 1) {
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: directories.workspace },
      });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: `turn ${index}` }] });
      await runtime.waitForRun(runId);
      await runtime.closeSession({ sessionId });
      opened.push(sessionId);
    }
    // Newest first: by createdAt, then by id for sessions opened in the same millisecond.
    const listed = await runtime.listSessions();
    const expected = listed.map((session) => session.sessionId);
    expect(new Set(expected)).toEqual(new Set(opened));
    expect(expected).toEqual([...listed].sort(newestFirst).map((session) => session.sessionId));
    expect(await everyPage(runtime)).toEqual(expected);
    expect(await everyPage(runtime, { state: 'closed' })).toEqual(expected);
    expect(await runtime.countSessionsByState()).toEqual({ idle: 0, running: 0, waiting: 0, closed: 300 });

    const [first, second, third] = opened as [string, string, string];
    expect((await runtime.getSession(first)).title).toBe('turn 0');
    expect(types(await runtime.readEvents(first))).toEqual(closedHistory);
    expect(types(await collectUntil(runtime, first, (event) => event.seq === 5))).toEqual(closedHistory);
    await runtime.openSession({ continueSession: first });
    await runtime.deleteSession(second);
    expect((await agentErrorOf(runtime.getSession(second))).code).toBe('session_not_found');
    await runtime.shutdown();

    // The restarted runtime holds only the reopened session; the rest are read when asked for.
    runtime = await startRuntime();
    try {
      const remaining = expected.filter((id) => id !== second);
      expect(await everyPage(runtime)).toEqual(remaining);
      expect(await everyPage(runtime, { state: 'idle' })).toEqual([first]);
      expect(await runtime.countSessionsByState()).toEqual({ idle: 1, running: 0, waiting: 0, closed: 298 });
      expect(types(await runtime.readEvents(first))).toEqual([...closedHistory, '6 session.opened']);

      expect((await runtime.getSession(third)).state).toBe('closed');
      expect(types(await collectUntil(runtime, third, (event) => event.seq === 5))).toEqual(closedHistory);
      await runtime.openSession({ continueSession: third });
      const { runId } = await runtime.submitTurn({
        sessionId: third,
        input: [{ type: 'text', text: 'after the restart' }],
      });
      await runtime.waitForRun(runId);
      expect(types(await runtime.readEvents(third, { afterSeq: 5 }))).toEqual([
        '6 session.opened',
        '7 run.started',
        '8 run.message_delta',
        '9 run.completed',
      ]);
      expect((await runtime.getSession(third)).lastSeq).toBe(9);

      const last = opened.at(-1)!;
      await runtime.deleteSession(last);
      expect((await agentErrorOf(runtime.readEvents(last))).code).toBe('session_not_found');
      expect(await everyPage(runtime)).toEqual(remaining.filter((id) => id !== last));
    } finally {
      await runtime.shutdown();
    }
  });
});
