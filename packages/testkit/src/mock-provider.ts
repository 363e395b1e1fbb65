import type { InteractionAnswer, ModelList, PermissionMode } from '@tether/protocol';
import type {
  AgentProviderV1,
  AgentProviderV1Capabilities,
  AgentProviderV1FileRewind,
  AgentProviderV1InputPart,
  AgentProviderV1Part,
  AgentProviderV1Session,
  AgentProviderV1SessionOptions,
  AgentProviderV1StopOptions,
  AgentProviderV1StopReason,
} from '@tether/provider-spec';

export interface MockTurnContext {
  readonly runId: string;
  readonly input: readonly AgentProviderV1InputPart[];
  readonly emit: (part: AgentProviderV1Part) => void;
  readonly session: MockProviderSession;
}

/** What a mock turn does: emit parts now, later, or never (to test what waits). */
export type MockTurnScript = (context: MockTurnContext) => void | Promise<void>;

export interface MockProviderSession {
  readonly options: AgentProviderV1SessionOptions;
  readonly turns: { runId: string; input: readonly AgentProviderV1InputPart[] }[];
  readonly stops: AgentProviderV1StopReason[];
  /** Every answer delivered to this session, in order. */
  readonly responses: { interactionRef: string; answer: InteractionAnswer }[];
  readonly modes: PermissionMode[];
  readonly interrupts: string[];
  /** Every follow-up steered into a run of this session (doSteer), in order. */
  readonly steers: MockSteer[];
  /** Which provider session of the Tether session this is (1 for the first opened, 2 after a restart...). */
  readonly ordinal: number;
  /** Whether replyWithCheckpoint has reported this session's conversation id. */
  reportedConversation: boolean;
  /** Every file rewind asked of this session (dry runs too), in order. */
  readonly fileRewinds: { inputMessageId: string; dryRun: boolean }[];
  /** How often the runtime asked this session to start its agent ahead of a turn (doStart). */
  starts: number;
  /** Emits a part as the provider would, at any time (e.g. after the test decides). */
  emit(part: AgentProviderV1Part): void;
}

/** A follow-up handed to the agent while its run is active (doSteer). */
export interface MockSteer {
  readonly runId: string;
  readonly inputId: string;
  readonly input: readonly AgentProviderV1InputPart[];
}

export interface MockProvider extends AgentProviderV1 {
  readonly sessions: MockProviderSession[];
}

export const mockCapabilities: AgentProviderV1Capabilities = Object.freeze({
  resume: true,
  interrupt: true,
  approvals: true,
  questions: true,
  controls: true,
  usage: true,
  setModel: true,
  setMode: true,
  fork: false,
  rewind: false,
  rewindFiles: false,
  images: false,
  modelList: false,
  inputParts: ['text'],
});

/** A turn that answers `text` in one delta and succeeds. */
export function replyWith(text: string): MockTurnScript {
  return ({ runId, emit }) => {
    emit({ type: 'run.message_delta', runId, blockId: 'block-1', text });
    emit({ type: 'run.completed', runId, outcome: 'succeeded' });
  };
}

/**
 * A turn that answers `text` and reports a checkpoint as the Claude provider does: the session's
 * conversation id first (a new one per provider session, as a fork's or a rewound session's new
 * process reports), then the run's message ids (`input-<runId>`, `answer-<runId>`).
 */
export function replyWithCheckpoint(text = 'ok'): MockTurnScript {
  return ({ runId, emit, session }) => {
    const providerSessionId = conversationOf(session);
    if (!session.reportedConversation) {
      session.reportedConversation = true;
      emit({ type: 'session.provider_session_changed', providerSessionId });
    }
    emit({ type: 'run.message_delta', runId, blockId: 'block-1', text });
    emit({
      type: 'run.checkpointed',
      runId,
      providerSessionId,
      inputMessageId: `input-${runId}`,
      lastMessageId: `answer-${runId}`,
    });
    emit({ type: 'run.completed', runId, outcome: 'succeeded' });
  };
}

/** The conversation a mock session works in: the one it resumed, else its own (named after the Tether session and its order). */
function conversationOf(session: MockProviderSession): string {
  return session.options.resumeProviderSessionId ?? `conversation-${session.options.sessionId}-${session.ordinal}`;
}

/**
 * A provider for unit tests of the runtime: records every call and runs a scripted function
 * per turn. Not for testing Claude behaviour — those tests drive the real binary.
 */
export interface MockProviderOptions {
  readonly name?: string;
  readonly turn?: MockTurnScript;
  readonly capabilities?: Partial<AgentProviderV1Capabilities>;
  readonly openError?: Error;
  /** Called for each stop; throw to simulate a teardown that fails. */
  readonly stop?: (
    reason: AgentProviderV1StopReason,
    session: MockProviderSession,
    options: AgentProviderV1StopOptions,
  ) => void | Promise<void>;
  /** Called for each interrupt (e.g. to emit the run's completion); throw to refuse it. */
  readonly interrupt?: (runId: string, session: MockProviderSession) => void | Promise<void>;
  /**
   * What a steer does (e.g. emit its input.folded or input.cancelled part, now or later); throw to
   * refuse it. With it the provider can steer (capabilities.steer, doSteer); without it, it cannot.
   */
  readonly steer?: (steer: MockSteer, session: MockProviderSession) => void | Promise<void>;
  /**
   * Whether the agent gives a steer back (doWithdrawSteer): true emits its input.cancelled
   * (withdrawn) as a provider must; without it the session has no doWithdrawSteer.
   */
  readonly withdrawSteer?: (inputId: string, session: MockProviderSession) => boolean | Promise<boolean>;
  /** Called for each answer; throw to simulate a delivery failure. */
  readonly respond?: (
    response: { interactionRef: string; answer: InteractionAnswer },
    session: MockProviderSession,
  ) => void | Promise<void>;
  /** Whether the session's agent must restart to enter a mode. Default: true for bypass, always. */
  readonly requiresRestartFor?: (mode: PermissionMode, session: MockProviderSession) => boolean;
  /** What a file rewind finds or does; without it the session has no doRewindFiles. */
  readonly rewindFiles?: (
    request: { inputMessageId: string; dryRun: boolean },
    session: MockProviderSession,
  ) => AgentProviderV1FileRewind | Promise<AgentProviderV1FileRewind>;
  /** What starting the agent ahead of a turn does (throw to fail it); without it the session has no doStart. */
  readonly start?: (session: MockProviderSession) => void | Promise<void>;
  /** The provider's model list; without it the provider has no doListModels. */
  readonly listModels?: () => ModelList | Promise<ModelList>;
}

export function createMockProvider(options: MockProviderOptions = {}): MockProvider {
  const sessions: MockProviderSession[] = [];
  const script = options.turn ?? replyWith('ok');
  return {
    specificationVersion: 'agent-provider-v1',
    name: options.name ?? 'mock',
    capabilities: { ...mockCapabilities, ...(options.steer ? { steer: true } : {}), ...options.capabilities },
    sessions,
    async doProbe() {
      return { available: true, binaryPath: '/mock', source: 'option', version: 'mock' };
    },
    async doOpenSession(sessionOptions): Promise<AgentProviderV1Session> {
      if (options.openError) throw options.openError;
      const session: MockProviderSession = {
        options: sessionOptions,
        turns: [],
        stops: [],
        responses: [],
        modes: [],
        interrupts: [],
        steers: [],
        fileRewinds: [],
        starts: 0,
        ordinal: sessions.filter((opened) => opened.options.sessionId === sessionOptions.sessionId).length + 1,
        reportedConversation: false,
        emit: (part) => sessionOptions.emit(part),
      };
      const rewindFiles = options.rewindFiles;
      const start = options.start;
      const steer = options.steer;
      const withdrawSteer = options.withdrawSteer;
      sessions.push(session);
      return {
        async doTurn(turn) {
          session.turns.push({ runId: turn.runId, input: turn.input });
          await script({ runId: turn.runId, input: turn.input, emit: session.emit, session });
        },
        async doStop(reason, stopOptions = {}) {
          session.stops.push(reason);
          await options.stop?.(reason, session, stopOptions);
        },
        async doControl({ runId, name, argument }) {
          session.turns.push({
            runId,
            input: [{ type: 'text', text: `/${name}${argument === undefined ? '' : ` ${argument}`}` }],
          });
          session.emit({ type: 'control.completed', runId, name, status: 'succeeded', output: `${name} done` });
          session.emit({ type: 'run.completed', runId, outcome: 'succeeded' });
        },
        async doSetModel(model) {
          return model === 'sonnet' ? 'mock-sonnet-1' : model;
        },
        async doGetContextUsage() {
          return {
            model: 'mock',
            totalTokens: 10,
            maxTokens: 100,
            percentage: 10,
            categories: [{ name: 'Messages', tokens: 10 }],
          };
        },
        async doGetSessionCost() {
          return { report: 'Estimated cost: $0.00' };
        },
        async doInterrupt({ runId }) {
          session.interrupts.push(runId);
          await options.interrupt?.(runId, session);
          return { applied: true };
        },
        async doRespond(response) {
          await options.respond?.(response, session);
          session.responses.push(response);
        },
        async doSetPermissionMode(mode) {
          session.modes.push(mode);
          return mode;
        },
        requiresRestartFor(mode) {
          return options.requiresRestartFor ? options.requiresRestartFor(mode, session) : mode === 'bypass';
        },
        ...(start
          ? {
              async doStart() {
                session.starts += 1;
                await start(session);
              },
            }
          : {}),
        ...(steer
          ? {
              async doSteer(request: MockSteer) {
                session.steers.push({ runId: request.runId, inputId: request.inputId, input: request.input });
                await steer(request, session);
              },
            }
          : {}),
        ...(withdrawSteer
          ? {
              async doWithdrawSteer({ inputId }: { inputId: string }) {
                const steered = session.steers.find((request) => request.inputId === inputId);
                const withdrawn = steered !== undefined && (await withdrawSteer(inputId, session));
                if (withdrawn)
                  session.emit({ type: 'input.cancelled', inputId, runId: steered.runId, reason: 'withdrawn' });
                return { withdrawn };
              },
            }
          : {}),
        ...(rewindFiles
          ? {
              async doRewindFiles(request: { inputMessageId: string; dryRun: boolean }) {
                session.fileRewinds.push({ inputMessageId: request.inputMessageId, dryRun: request.dryRun });
                return rewindFiles(request, session);
              },
            }
          : {}),
      };
    },
    ...(options.listModels ? { doListModels: async () => options.listModels!() } : {}),
  };
}
