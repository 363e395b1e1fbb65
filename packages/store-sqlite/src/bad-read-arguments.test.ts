import type { ProtocolEvent } from '@tether/protocol';
import { type AgentRuntime, type TetherStore, createAgentRuntime, createInMemoryStore } from '@tether/runtime';
import { agentErrorOf, createMockProvider } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { dataDirectoryPerTest } from './__fixtures__/temporary-directory.js';
import { openSqliteStore } from './index.js';

// The runtime's reads refuse what they cannot read as the daemon does (400 invalid_command, the same
// reasons), instead of passing it to the store (SQLite: store_failure "Check the data directory") or
// answering nothing.

const directories = dataDirectoryPerTest();

const stores: readonly [string, () => Promise<TetherStore>][] = [
  ['SQLite', () => openSqliteStore({ dataDir: directories.dataDir })],
  ['in-memory', async () => createInMemoryStore()],
];

/** Bad arguments, as a caller without types (or with a cast) passes them. */
type Loose = (runtime: AgentRuntime, sessionId: string) => Promise<unknown>;
const loose = (value: unknown) => value as never;

const refusals: readonly { readonly call: string; readonly read: Loose; readonly reason: string }[] = [
  {
    call: 'getSession(undefined)',
    read: (runtime) => runtime.getSession(loose(undefined)),
    reason: 'invalid_session_id',
  },
  { call: 'getSession(42)', read: (runtime) => runtime.getSession(loose(42)), reason: 'invalid_session_id' },
  {
    call: "listSessions({ before: 'garbage' })",
    read: (runtime) => runtime.listSessions({ before: loose('garbage') }),
    reason: 'invalid_cursor',
  },
  {
    call: 'listSessions({ before: {} })',
    read: (runtime) => runtime.listSessions({ before: loose({}) }),
    reason: 'invalid_cursor',
  },
  {
    call: "listSessions({ state: 'zzz' })",
    read: (runtime) => runtime.listSessions({ state: loose('zzz') }),
    reason: 'invalid_state',
  },
  {
    call: 'listSessions({ limit: 0 })',
    read: (runtime) => runtime.listSessions({ limit: 0 }),
    reason: 'invalid_limit',
  },
  {
    call: 'listSessions({ limit: 2.5 })',
    read: (runtime) => runtime.listSessions({ limit: 2.5 }),
    reason: 'invalid_limit',
  },
  {
    call: 'readEvents(id, { limit: -1 })',
    read: (runtime, sessionId) => runtime.readEvents(sessionId, { limit: -1 }),
    reason: 'invalid_limit',
  },
  {
    call: 'readEvents(id, { afterSeq: -1 })',
    read: (runtime, sessionId) => runtime.readEvents(sessionId, { afterSeq: -1 }),
    reason: 'invalid_start_seq',
  },
  {
    call: "readEvents(id, { afterSeq: '3' })",
    read: (runtime, sessionId) => runtime.readEvents(sessionId, { afterSeq: loose('3') }),
    reason: 'invalid_start_seq',
  },
  {
    call: 'readEvents(undefined)',
    read: (runtime) => runtime.readEvents(loose(undefined)),
    reason: 'invalid_session_id',
  },
];

describe.each(stores)('bad arguments to the runtime reads [%s store]', (_name, openStore) => {
  let runtime: AgentRuntime | undefined;
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
  });

  async function started(): Promise<{ runtime: AgentRuntime; sessionId: string }> {
    runtime = await createAgentRuntime({ providers: [createMockProvider()], store: await openStore() });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: directories.workspace } });
    return { runtime, sessionId };
  }

  it.each(refusals)('$call is invalid_command ($reason), saying what is expected', async ({ read, reason }) => {
    const { runtime, sessionId } = await started();
    const error = await agentErrorOf(read(runtime, sessionId));
    expect(error).toMatchObject({ code: 'invalid_command', retryable: false, details: { reason } });
    expect(error.message).not.toMatch(/data directory/);
  });

  it('follow refuses a bad afterSeq at the call', async () => {
    const { runtime, sessionId } = await started();
    const thrown = (() => {
      try {
        runtime.follow(sessionId, { afterSeq: -1, onEvent: () => undefined });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toMatchObject({ code: 'invalid_command', details: { reason: 'invalid_start_seq' } });
  });

  it('follow without afterSeq follows from the first event, as subscribe does', async () => {
    const { runtime, sessionId } = await started();
    const { lastSeq } = await runtime.getSession(sessionId);
    const seen: number[] = [];
    await new Promise<void>((resolve, reject) => {
      // No afterSeq: what a caller without types may leave out.
      const withoutAfterSeq = {
        onEvent: (event: ProtocolEvent) => {
          seen.push(event.seq);
          if (event.seq === lastSeq) resolve();
          return event.seq < lastSeq;
        },
        onError: reject,
      };
      runtime.follow(sessionId, loose(withoutAfterSeq));
    });
    expect(seen).toEqual(Array.from({ length: lastSeq }, (_, index) => index + 1));
  });

  it('good arguments still read: a state, a limit, a listed session to go on after, a large event limit', async () => {
    const { runtime, sessionId } = await started();
    const [only] = await runtime.listSessions({ state: 'idle', limit: 1 });
    expect(only?.sessionId).toBe(sessionId);
    expect(await runtime.listSessions({ before: only })).toEqual([]);
    expect((await runtime.readEvents(sessionId, { afterSeq: 0, limit: 1_000_000 })).length).toBeGreaterThan(0);
  });
});
