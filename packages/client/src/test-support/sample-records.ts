import { newRunId, newSessionId, zeroUsage } from '@tether/protocol';
import type { Command, EventBody, ModelList, ProtocolEvent, Receipt, SessionSnapshot } from '@tether/protocol';
import { mockCapabilities } from '@tether/testkit';

/** A valid snapshot of an idle session; tests override what they look at. */
export function sampleSnapshot(overrides: Partial<SessionSnapshot> = {}): SessionSnapshot {
  return {
    sessionId: newSessionId(),
    provider: 'claude',
    state: 'idle',
    workspace: { kind: 'directory', path: '/repo' },
    workspaceStatus: null,
    configuration: {},
    ephemeral: false,
    activeRunId: null,
    model: null,
    permissionMode: null,
    modesRequiringRestart: [],
    pendingInteractions: [],
    queuedInputs: [],
    limits: null,
    contextUsage: null,
    providerSessionId: null,
    forkedFrom: null,
    usage: { ...zeroUsage },
    title: null,
    lastRun: null,
    lastSeq: 0,
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    lastActivityAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/** A small valid event body (a diagnostic carries no run), numbered by the fake daemon. */
export function sampleEventBody(code = 'test.note'): EventBody {
  return { type: 'diagnostic', level: 'info', code };
}

export function withEnvelope(sessionId: string, seq: number, body: EventBody): ProtocolEvent {
  return { ...body, sessionId, seq, at: new Date(0).toISOString() } as ProtocolEvent;
}

/** What a well-behaved daemon would answer each command with. */
export function defaultReceipt(command: Command): Receipt {
  const base = { commandId: command.commandId };
  switch (command.type) {
    case 'open_session':
      return { ...base, type: command.type, sessionId: command.continueSession ?? newSessionId() };
    case 'submit_turn':
    case 'run_control':
      return { ...base, type: command.type, sessionId: command.sessionId, runId: newRunId() };
    case 'interrupt_run':
      return { ...base, type: command.type, sessionId: command.sessionId, runId: command.runId ?? null };
    case 'close_session':
      return { ...base, type: command.type, sessionId: command.sessionId };
    case 'cancel_queued_input':
      return { ...base, type: command.type, sessionId: command.sessionId, inputId: command.inputId };
    case 'respond_interaction':
      return {
        ...base,
        type: command.type,
        sessionId: command.sessionId,
        interactionRef: command.interactionRef,
        status: 'settled',
      };
    case 'set_permission_mode':
      return { ...base, type: command.type, sessionId: command.sessionId, mode: command.mode };
    case 'set_model':
      return { ...base, type: command.type, sessionId: command.sessionId, model: command.model };
    case 'get_context_usage':
      return {
        ...base,
        type: command.type,
        sessionId: command.sessionId,
        usage: { model: null, totalTokens: 0, maxTokens: 200_000, percentage: 0, categories: [] },
      };
    case 'get_session_cost':
      return { ...base, type: command.type, sessionId: command.sessionId, costUsd: null, report: '' };
    case 'fork_session':
      return {
        ...base,
        type: command.type,
        sessionId: command.sessionId,
        forkSessionId: newSessionId(),
        atRunId: command.atRunId ?? null,
      };
    case 'rewind_session':
      return { ...base, type: command.type, sessionId: command.sessionId, toRunId: command.toRunId, files: null };
  }
}

export const sampleProviders = {
  providers: [
    {
      name: 'claude',
      capabilities: mockCapabilities,
      availability: { available: true, binaryPath: '/usr/local/bin/claude', source: 'path', version: '2.1.0' },
    },
  ],
};

/** A model list as the daemon answers GET /v1/providers/claude/models. */
export const sampleModelList: ModelList = {
  provider: 'claude',
  agentVersion: '2.1.332',
  models: [
    {
      id: 'sonnet',
      displayName: 'Sonnet',
      description: 'Fast and capable',
      resolvedModel: 'claude-sonnet-4-5',
      effortLevels: ['low', 'high'],
      supportsFastMode: false,
      supportsAdaptiveThinking: true,
      supportsAutoMode: false,
    },
  ],
};
