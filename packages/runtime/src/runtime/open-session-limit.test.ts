import os from 'node:os';
import { agentErrorOf, createMockProvider } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';

/** The mock provider writes nothing: any existing directory will do as the workspace. */
const workspace = os.tmpdir();

describe('maxOpenSessions', () => {
  it('refuses one open session too many with capacity_exceeded, recording nothing; closing one makes room', async () => {
    const runtime = await createAgentRuntime({ providers: [createMockProvider()], maxOpenSessions: 2 });
    const open = () => runtime.openSession({ workspace: { kind: 'directory', path: workspace } });
    // Opened at once: places are held while each is being opened, so none slips past the cap.
    const results = await Promise.allSettled([open(), open(), open()]);
    expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    const refused = await agentErrorOf(open());
    expect(refused.code).toBe('capacity_exceeded');
    expect(refused.details).toMatchObject({ reason: 'open_session_limit' });
    expect(refused.message).toContain('Close sessions');
    expect(refused.message).toContain('--max-open-sessions');
    expect(await runtime.listSessions()).toHaveLength(2);

    const [first] = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value.sessionId] : []));
    await runtime.closeSession({ sessionId: first! });
    const third = await open();
    // Reopening a closed session is opening one more; reopening an open one is not.
    expect((await agentErrorOf(runtime.openSession({ continueSession: first! }))).code).toBe('capacity_exceeded');
    expect((await runtime.getSession(first!)).state).toBe('closed');
    expect((await runtime.openSession({ continueSession: third.sessionId })).sessionId).toBe(third.sessionId);
    await runtime.closeSession({ sessionId: third.sessionId });
    expect((await runtime.openSession({ continueSession: first! })).sessionId).toBe(first);
    await runtime.shutdown();
  });
});
