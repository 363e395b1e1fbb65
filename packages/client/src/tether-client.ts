import { newCommandId } from '@tether/protocol';
import type {
  CloseSessionCommand,
  CloseSessionReceipt,
  Command,
  GetContextUsageCommand,
  GetContextUsageReceipt,
  GetSessionCostCommand,
  GetSessionCostReceipt,
  InterruptRunCommand,
  InterruptRunReceipt,
  OpenSessionCommand,
  OpenSessionReceipt,
  ProtocolEvent,
  ReceiptFor,
  RespondInteractionCommand,
  RespondInteractionReceipt,
  RunControlCommand,
  RunControlReceipt,
  SessionSnapshot,
  SessionState,
  SetModelCommand,
  SetModelReceipt,
  SetPermissionModeCommand,
  SetPermissionModeReceipt,
  SubmitTurnCommand,
  SubmitTurnReceipt,
} from '@tether/protocol';
import { invalidResponseError } from './client-errors.js';
import { createDaemonConnection, sendRequest } from './daemon-connection.js';
import {
  type DaemonHealth,
  type ProviderInfo,
  type SessionPage,
  parseHealth,
  parseProviders,
  parseReceipt,
  parseSessionPage,
  parseSnapshot,
} from './daemon-responses.js';
import { type SubscribeOptions, subscribeToEvents } from './event-subscription.js';
import { type ReconnectOptions, reconnectSchedule } from './reconnect-backoff.js';

export interface TetherClientOptions {
  /** The daemon's base URL, e.g. "http://127.0.0.1:7437" (what `tether serve` prints). */
  readonly url: string;
  /** The daemon's bearer token (`tether token`). */
  readonly token: string;
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** How event subscriptions reconnect. */
  readonly reconnect?: ReconnectOptions;
}

/** A command as the typed helpers take it: the commandId is optional (one is generated). */
export type CommandInput<C extends Command> = Omit<C, 'type' | 'commandId'> & { commandId?: string };

export interface SessionFilter {
  readonly state?: SessionState;
  /** Sessions per page (the daemon's default is 50, its maximum 500). */
  readonly limit?: number;
}

export interface ListSessionsOptions extends SessionFilter {
  /** The `next` cursor of the previous page. */
  readonly before?: string;
}

/**
 * A typed client of the Tether daemon. Every failure is an AgentError (from @tether/protocol).
 * Commands are never retried by the client: to retry one safely, send it again with the same
 * commandId (the daemon answers a repeated commandId with the original receipt).
 */
export interface TetherClient {
  /** Any command; answers with its receipt. */
  dispatch<C extends Command>(command: C): Promise<ReceiptFor<C>>;
  openSession(input: CommandInput<OpenSessionCommand>): Promise<OpenSessionReceipt>;
  /** Answers once the run is recorded; follow it with subscribe. */
  submitTurn(input: CommandInput<SubmitTurnCommand>): Promise<SubmitTurnReceipt>;
  interruptRun(input: CommandInput<InterruptRunCommand>): Promise<InterruptRunReceipt>;
  closeSession(input: CommandInput<CloseSessionCommand>): Promise<CloseSessionReceipt>;
  respondInteraction(input: CommandInput<RespondInteractionCommand>): Promise<RespondInteractionReceipt>;
  setPermissionMode(input: CommandInput<SetPermissionModeCommand>): Promise<SetPermissionModeReceipt>;
  runControl(input: CommandInput<RunControlCommand>): Promise<RunControlReceipt>;
  setModel(input: CommandInput<SetModelCommand>): Promise<SetModelReceipt>;
  getContextUsage(input: CommandInput<GetContextUsageCommand>): Promise<GetContextUsageReceipt>;
  getSessionCost(input: CommandInput<GetSessionCostCommand>): Promise<GetSessionCostReceipt>;

  getSession(sessionId: string): Promise<SessionSnapshot>;
  /** One page, newest first; pass `next` back as `before` for the following one. */
  listSessions(options?: ListSessionsOptions): Promise<SessionPage>;
  /** Every matching session, following the cursors page by page. */
  listAllSessions(filter?: SessionFilter): Promise<SessionSnapshot[]>;
  getProviders(): Promise<ProviderInfo[]>;
  /** Deletes a closed session and everything stored about it (an open one: session_open). */
  deleteSession(sessionId: string): Promise<void>;
  /** The public health check (sent without the token). */
  health(): Promise<DaemonHealth>;

  /**
   * A session's events with seq > afterSeq, replayed then live, each seq exactly once and in order,
   * reconnecting by itself. Ends when the signal aborts; throws an AgentError on 401, 404, an event
   * that does not validate, or when `reconnect.maxAttempts` attempts in a row fail.
   */
  subscribe(sessionId: string, options?: SubscribeOptions): AsyncIterable<ProtocolEvent>;
}

export function createTetherClient(options: TetherClientOptions): TetherClient {
  const connection = createDaemonConnection(options.url, options.token, options.fetch);
  const schedule = reconnectSchedule(options.reconnect);
  const sessionPath = (sessionId: string) => `/v1/sessions/${encodeURIComponent(sessionId)}`;

  async function dispatch<C extends Command>(command: C): Promise<ReceiptFor<C>> {
    const body = await sendRequest(connection, { method: 'POST', path: '/v1/commands', body: command });
    return parseReceipt(connection.url, command.type, body) as ReceiptFor<C>;
  }

  function send<C extends Command>(type: C['type'], input: CommandInput<C>): Promise<ReceiptFor<C>> {
    const { commandId, ...fields } = input;
    return dispatch({ ...fields, type, commandId: commandId ?? newCommandId() } as unknown as C);
  }

  async function listSessions(listOptions: ListSessionsOptions = {}): Promise<SessionPage> {
    const query = new URLSearchParams();
    if (listOptions.state !== undefined) query.set('state', listOptions.state);
    if (listOptions.limit !== undefined) query.set('limit', String(listOptions.limit));
    if (listOptions.before !== undefined) query.set('before', listOptions.before);
    const search = query.toString() === '' ? '' : `?${query.toString()}`;
    return parseSessionPage(connection.url, await sendRequest(connection, { method: 'GET', path: `/v1/sessions${search}` }));
  }

  return {
    dispatch,
    openSession: (input) => send<OpenSessionCommand>('open_session', input),
    submitTurn: (input) => send<SubmitTurnCommand>('submit_turn', input),
    interruptRun: (input) => send<InterruptRunCommand>('interrupt_run', input),
    closeSession: (input) => send<CloseSessionCommand>('close_session', input),
    respondInteraction: (input) => send<RespondInteractionCommand>('respond_interaction', input),
    setPermissionMode: (input) => send<SetPermissionModeCommand>('set_permission_mode', input),
    runControl: (input) => send<RunControlCommand>('run_control', input),
    setModel: (input) => send<SetModelCommand>('set_model', input),
    getContextUsage: (input) => send<GetContextUsageCommand>('get_context_usage', input),
    getSessionCost: (input) => send<GetSessionCostCommand>('get_session_cost', input),

    async getSession(sessionId) {
      return parseSnapshot(connection.url, await sendRequest(connection, { method: 'GET', path: sessionPath(sessionId) }));
    },
    listSessions,
    async listAllSessions(filter = {}) {
      const sessions: SessionSnapshot[] = [];
      const seen = new Set<string>();
      let before: string | undefined;
      for (;;) {
        const page = await listSessions({ ...filter, ...(before === undefined ? {} : { before }) });
        sessions.push(...page.sessions);
        if (page.next === null) return sessions;
        // A cursor seen before would page forever.
        if (seen.has(page.next)) throw invalidResponseError(connection.url, 'a session list cursor that repeats');
        seen.add(page.next);
        before = page.next;
      }
    },
    async getProviders() {
      return parseProviders(connection.url, await sendRequest(connection, { method: 'GET', path: '/v1/providers' }));
    },
    async deleteSession(sessionId) {
      await sendRequest(connection, { method: 'DELETE', path: sessionPath(sessionId) });
    },
    async health() {
      return parseHealth(connection.url, await sendRequest(connection, { method: 'GET', path: '/health', authenticated: false }));
    },
    subscribe: (sessionId, subscribeOptions = {}) => subscribeToEvents(connection, sessionId, subscribeOptions, schedule),
  };
}
