import { zeroUsage } from '@tether/protocol';
import type { SessionRecord } from '@tether/runtime';

/** A session row for unit tests of the state machines and stores: idle, nothing known yet. */
export function sampleSessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const at = '2026-11-29T00:00:00.000Z';
  return {
    sessionId: `ses_${'a'.repeat(32)}`,
    provider: 'mock',
    workspace: { kind: 'directory', path: '/tmp' },
    configuration: {},
    ephemeral: false,
    redactInput: false,
    state: 'idle',
    activeRunId: null,
    permissionMode: null,
    model: null,
    liveProcess: null,
    providerSessionId: null,
    usage: zeroUsage,
    title: null,
    lastRun: null,
    lastSeq: 1,
    createdAt: at,
    updatedAt: at,
    lastActivityAt: at,
    ...overrides,
  };
}
