import { randomUUID } from 'node:crypto';
import type { SessionConfiguration } from '@tether/protocol';
import type {
  AgentProviderV1,
  AgentProviderV1Part,
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
} from '@tether/provider-spec';
import type { ClaudeTestEnvironment } from '@tether/testkit';
import { afterEach } from 'vitest';

export type Checkpoint = Extract<AgentProviderV1Part, { type: 'run.checkpointed' }>;
type Completion = Extract<AgentProviderV1Part, { type: 'run.completed' }>;

/** One provider session driven directly (no runtime), with everything it emitted. */
export interface ProviderConversation {
  readonly session: AgentProviderV1Session;
  readonly parts: readonly AgentProviderV1Part[];
  /** At each call of the session's messageEnded, how many parts it had emitted. */
  readonly messageEnds: readonly number[];
  /** Starts a text turn and resolves once it began (the agent has it), without waiting for its end. */
  start(text: string): Promise<{ readonly runId: string; readonly ended: Promise<TurnEnd> }>;
  /** Runs a text turn to its end. */
  turn(text: string): Promise<TurnEnd>;
  /** The conversation id the provider last reported (session.provider_session_changed). */
  providerSessionId(): string | undefined;
  /** The first part (already emitted or to come) of this type that matches. */
  next<Type extends AgentProviderV1Part['type']>(
    type: Type,
    where?: (part: Extract<AgentProviderV1Part, { type: Type }>) => boolean,
  ): Promise<Extract<AgentProviderV1Part, { type: Type }>>;
}

export interface TurnEnd {
  readonly checkpoint: Checkpoint | undefined;
  readonly completion: Completion;
}

/**
 * Opens a session on the environment's provider the way the runtime would (a fresh Tether id, the
 * environment's workspace), so a scenario can hand it what the runtime hands a fork or a rewind
 * (copyConversation) and read the provider's own parts.
 */
export async function openProviderConversation(
  environment: ClaudeTestEnvironment,
  options: {
    readonly provider?: AgentProviderV1;
    readonly configuration?: SessionConfiguration;
    readonly copyConversation?: AgentProviderV1SessionOptions['copyConversation'];
    readonly resumeProviderSessionId?: string;
    readonly spentCostUsd?: number;
  } = {},
): Promise<ProviderConversation> {
  const parts: AgentProviderV1Part[] = [];
  const messageEnds: number[] = [];
  const listeners = new Set<(part: AgentProviderV1Part) => void>();
  const provider = options.provider ?? environment.provider();
  const session = await provider.doOpenSession({
    sessionId: `session-${randomUUID()}`,
    workspace: { kind: 'directory', path: environment.workspace },
    configuration: options.configuration ?? {},
    ephemeral: false,
    resumeProviderSessionId: options.resumeProviderSessionId ?? null,
    copyConversation: options.copyConversation ?? null,
    ...(options.spentCostUsd !== undefined ? { spentCostUsd: options.spentCostUsd } : {}),
    emit: (part) => {
      parts.push(part);
      for (const listener of listeners) listener(part);
    },
    messageEnded: () => messageEnds.push(parts.length),
  });
  const ended = (runId: string) =>
    new Promise<TurnEnd>((resolve) => {
      const listener = (part: AgentProviderV1Part) => {
        if (part.type !== 'run.completed' || part.runId !== runId) return;
        listeners.delete(listener);
        const checkpoint = parts.find(
          (candidate): candidate is Checkpoint => candidate.type === 'run.checkpointed' && candidate.runId === runId,
        );
        resolve({ checkpoint, completion: part });
      };
      listeners.add(listener);
    });
  const start = async (text: string) => {
    const runId = `run-${randomUUID()}`;
    const end = ended(runId);
    await session.doTurn({ runId, input: [{ type: 'text', text }] });
    return { runId, ended: end };
  };
  const next = <Type extends AgentProviderV1Part['type']>(
    type: Type,
    where: (part: Extract<AgentProviderV1Part, { type: Type }>) => boolean = () => true,
  ) =>
    new Promise<Extract<AgentProviderV1Part, { type: Type }>>((resolve) => {
      const matches = (part: AgentProviderV1Part): part is Extract<AgentProviderV1Part, { type: Type }> =>
        part.type === type && where(part as Extract<AgentProviderV1Part, { type: Type }>);
      const seen = parts.find(matches);
      if (seen) return resolve(seen);
      const listener = (part: AgentProviderV1Part) => {
        if (!matches(part)) return;
        listeners.delete(listener);
        resolve(part);
      };
      listeners.add(listener);
    });
  return {
    session,
    parts,
    messageEnds,
    start,
    next,
    turn: async (text) => (await start(text)).ended,
    providerSessionId: () =>
      parts.findLast(
        (part): part is Extract<AgentProviderV1Part, { type: 'session.provider_session_changed' }> =>
          part.type === 'session.provider_session_changed',
      )?.providerSessionId,
  };
}

/**
 * openProviderConversation for a describe block whose conversations are closed after each test, so
 * each agent ends before its environment's folders go. Call it in the block's body.
 */
export function conversationsClosedAfterEach(): typeof openProviderConversation {
  const opened: ProviderConversation[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((conversation) => conversation.session.doStop('close')));
  });
  return async (...args) => {
    const conversation = await openProviderConversation(...args);
    opened.push(conversation);
    return conversation;
  };
}
