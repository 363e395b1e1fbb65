import type { TetherClient } from '@tether/client';
import type { AgentError, ProviderCapabilities, SessionSnapshot } from '@tether/protocol';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { daemonAcpHost } from './daemon-acp-host.js';
import { runtimeAcpHost } from './runtime-acp-host.js';

describe("tether acp's hosts", () => {
  let environment: ClaudeTestEnvironment | undefined;
  afterEach(async () => {
    await environment?.cleanup();
    environment = undefined;
  });

  it('in-process: pages the runtime newest first with a cursor, refuses a cursor it did not give, and passes commands through', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const host = runtimeAcpHost(runtime);
    const opened: string[] = [];
    for (let index = 0; index < 3; index += 1)
      opened.push(
        (await host.openSession({ workspace: { kind: 'directory', path: environment.workspace } })).sessionId,
      );
    // The runtime's own order (newest first; sessions opened in the same millisecond by id): pages follow it.
    const newestFirst = (await runtime.listSessions({ limit: 3 })).map((session) => session.sessionId);
    expect(newestFirst.toSorted()).toEqual(opened.toSorted());
    const first = await host.listSessionPage({ limit: 2 });
    expect(first.sessions.map((session) => session.sessionId)).toEqual(newestFirst.slice(0, 2));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await host.listSessionPage({ limit: 2, cursor: first.nextCursor! });
    expect(second).toEqual({ sessions: [expect.objectContaining({ sessionId: newestFirst[2] })], nextCursor: null });
    await expect(host.listSessionPage({ limit: 2, cursor: 'not-a-cursor' })).rejects.toMatchObject({
      code: 'invalid_command',
    } satisfies Partial<AgentError>);
    expect(await host.providerCapabilities()).toBe(runtime.providers[0]!.capabilities);
    await expect(host.providerCapabilities('codex')).rejects.toMatchObject({ code: 'provider_unavailable' });
  });

  it("through a daemon: passes the daemon's cursor through and reads the named (or first) provider's capabilities", async () => {
    const snapshot = { sessionId: 'ses_1' } as SessionSnapshot;
    const capabilities = (name: string) => ({ approvals: name === 'claude' }) as unknown as ProviderCapabilities;
    const asked: unknown[] = [];
    const client = {
      async listSessions(options: unknown) {
        asked.push(options);
        return { sessions: [snapshot], next: 'daemon-cursor-2' };
      },
      async getProviders() {
        return ['claude', 'other'].map((name) => ({ name, capabilities: capabilities(name), availability: {} }));
      },
    } as unknown as TetherClient;
    const host = daemonAcpHost(client);
    expect(await host.listSessionPage({ limit: 100, cursor: 'daemon-cursor-1' })).toEqual({
      sessions: [snapshot],
      nextCursor: 'daemon-cursor-2',
    });
    await host.listSessionPage({ limit: 100 });
    expect(asked).toEqual([{ limit: 100, before: 'daemon-cursor-1' }, { limit: 100 }]);
    expect(await host.providerCapabilities()).toEqual(capabilities('claude'));
    expect(await host.providerCapabilities('other')).toEqual(capabilities('other'));
    await expect(host.providerCapabilities('codex')).rejects.toMatchObject({ code: 'provider_unavailable' });
  });
});
