import type {
  PermissionMode,
  ProtocolEvent,
  RunSnapshot,
  SessionConfiguration,
  SessionSnapshot,
  SubmitTurnReceipt,
} from '@tether/protocol';
import type { AgentRuntime } from '../runtime/runtime-types.js';

export interface OpenOptions extends SessionConfiguration {
  /** The directory the agent works in (absolute). */
  readonly cwd: string;
  readonly provider?: string;
  readonly model?: string;
  readonly permissionMode?: PermissionMode;
  readonly ephemeral?: boolean;
  readonly redactInput?: boolean;
}

/**
 * One turn: iterate it for the run's events (run.started … run.completed), or await
 * `receipt` (the turn was accepted) and `completion` (the run ended) separately.
 */
export interface Turn extends AsyncIterable<ProtocolEvent> {
  readonly receipt: Promise<SubmitTurnReceipt>;
  readonly completion: Promise<RunSnapshot>;
}

export interface TetherSession {
  readonly sessionId: string;
  send(text: string, options?: { redactInput?: boolean }): Turn;
  /** Every event of the session after `afterSeq` (default: from the start), then live ones. */
  events(options?: { afterSeq?: number; signal?: AbortSignal }): AsyncIterable<ProtocolEvent>;
  snapshot(): Promise<SessionSnapshot>;
  close(): Promise<void>;
}

export interface Tether {
  readonly runtime: AgentRuntime;
  open(options: OpenOptions): Promise<TetherSession>;
  /** Continues a session by id (reopening it if it was closed). */
  resume(sessionId: string): Promise<TetherSession>;
}

function sessionHandle(runtime: AgentRuntime, sessionId: string): TetherSession {
  return {
    sessionId,
    send(text, options = {}) {
      const controller = new AbortController();
      // Subscribe from the current end of the log before submitting, so nothing is missed.
      const start = runtime.getSession(sessionId).then((snapshot) => snapshot.lastSeq);
      const receipt = start.then(() => runtime.submitTurn({ sessionId, input: [{ type: 'text', text }], ...options }));
      const completion = receipt.then((accepted) => runtime.waitForRun(accepted.runId));
      completion.catch(() => {});
      return {
        receipt,
        completion,
        async *[Symbol.asyncIterator]() {
          const afterSeq = await start;
          const events = runtime.subscribe(sessionId, { afterSeq, signal: controller.signal });
          const { runId } = await receipt;
          try {
            for await (const event of events) {
              if (!('runId' in event) || event.runId !== runId) continue;
              yield event;
              if (event.type === 'run.completed') return;
            }
          } finally {
            controller.abort();
          }
        },
      };
    },
    events(options = {}) {
      return runtime.subscribe(sessionId, options);
    },
    snapshot() {
      return runtime.getSession(sessionId);
    },
    async close() {
      await runtime.closeSession({ sessionId });
    },
  };
}

/** A small layer over the runtime's commands for simple hosts. */
export function createTether(runtime: AgentRuntime): Tether {
  return {
    runtime,
    async open({ cwd, ...rest }) {
      const receipt = await runtime.openSession({ workspace: { kind: 'directory', path: cwd }, ...rest });
      return sessionHandle(runtime, receipt.sessionId);
    },
    async resume(sessionId) {
      await runtime.openSession({ continueSession: sessionId });
      return sessionHandle(runtime, sessionId);
    },
  };
}
