import {
  type Command,
  CommandId,
  type DeleteSessionOptions,
  type DeletedSession,
  type ModelList,
  type ProtocolEvent,
  type ReceiptFor,
  type SessionDiff,
  type SessionSnapshot,
  type SessionState,
  type StoredBlob,
  type CommandMethodName,
  type CommandMethods,
  type TetherSurface,
  checkSessionIdArgument,
  checkStartSeq,
  commandMethods,
} from '@tether/protocol';
import { invalidResponseError } from './client-errors.js';
import { type DaemonRequest, createDaemonConnection, readBytes, sendRequest } from './daemon-connection.js';
import {
  type DaemonHealth,
  type ProviderInfo,
  type SessionPage,
  parseBlob,
  parseDeletedSession,
  parseHealth,
  parseModelList,
  parseProviders,
  parseReceipt,
  parseSessionDiff,
  parseSessionPage,
  parseSnapshot,
} from './daemon-responses.js';
import { type SubscribeOptions, endableSubscription } from './event-subscription.js';
import { type ReconnectOptions, reconnectSchedule } from './reconnect-backoff.js';
import { type RequestOptions, checkTimeout } from './request-deadline.js';

export interface TetherClientOptions {
  /** The daemon's base URL, e.g. "http://127.0.0.1:7437" (what `tether serve` prints). */
  readonly url: string;
  /** The daemon's bearer token (`tether token`). */
  readonly token: string;
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** How event subscriptions reconnect, and when a silent stream counts as broken. */
  readonly reconnect?: ReconnectOptions;
  /**
   * How long a quick call (getSession, listSessions, getProviders, readBlob, health) waits for the
   * daemon's whole answer before it rejects with runtime_stopped (`details.reason: 'request_timeout'`).
   * Default 30,000 ms; Infinity for no limit. A call's own `timeoutMs` overrides it.
   */
  readonly requestTimeoutMs?: number;
  /**
   * The same for the calls that may wait on an agent or on git: commands (a turn's agent may have to
   * start, up to its 120 s start-up limit; a worktree is made with git), listModels (asks the agent),
   * getSessionDiff and deleteSession (run git). Default 150,000 ms, longer than those limits, so the
   * daemon's own error comes first. A command past it may still have been applied: send it again
   * with the same commandId to learn its receipt.
   */
  readonly commandTimeoutMs?: number;
}

export interface SessionFilter {
  readonly state?: SessionState;
  /** Sessions per page (the daemon's default is 50, its maximum 500). */
  readonly limit?: number;
}

export interface ListSessionsOptions extends SessionFilter, RequestOptions {
  /** The `next` cursor of the previous page. */
  readonly before?: string;
}

/**
 * A typed client of the Tether daemon. Every failure is an AgentError (from @tether/protocol).
 * Commands are never retried by the client: to retry one safely, send it again with the same
 * commandId (the daemon answers a repeated commandId with the original receipt).
 *
 * Every call takes `{ signal, timeoutMs }` (RequestOptions) last: a call that gets no answer in time,
 * or whose signal aborts, rejects with runtime_stopped (`details.reason` `request_timeout` or
 * `request_aborted`); for a command, its message says that it may or may not have been applied.
 */
export interface TetherClient extends Omit<TetherSurface, CommandMethodName>, CommandMethods<RequestOptions> {
  dispatch<C extends Command>(command: C, options?: RequestOptions): Promise<ReceiptFor<C>>;
  getSession(sessionId: string, options?: RequestOptions): Promise<SessionSnapshot>;
  /** One page, newest first; pass `next` back as `before` for the following one. */
  listSessions(options?: ListSessionsOptions): Promise<SessionPage>;
  /** Every matching session, following the cursors page by page (the time limit applies to each page). */
  listAllSessions(filter?: SessionFilter & RequestOptions): Promise<SessionSnapshot[]>;
  getProviders(options?: RequestOptions): Promise<ProviderInfo[]>;
  /** The provider's models (GET /v1/providers/:name/models); without a name, the daemon's default provider's (the first it lists). */
  listModels(provider?: string, options?: RequestOptions): Promise<ModelList>;
  /**
   * The session's work against the commit its worktree started from (GET /v1/sessions/:id/diff):
   * every changed file with its line counts and the unified diff, cut at maxBytes (the daemon's
   * default 1 MiB, at most 16 MiB). capability_unsupported for a directory workspace.
   */
  getSessionDiff(sessionId: string, options?: { readonly maxBytes?: number } & RequestOptions): Promise<SessionDiff>;
  /**
   * Deletes a closed session (DELETE /v1/sessions/:id): session_open while it is open;
   * workspace_has_changes (its message names the worktree and branch) when its worktree holds work, unless
   * discardWorkspaceChanges, which removes the worktree and its branch too.
   */
  deleteSession(sessionId: string, options?: DeleteSessionOptions & RequestOptions): Promise<DeletedSession>;
  /** An image a turn of the session carried, as bytes with its media type (GET /v1/sessions/:id/blobs/:sha256). */
  readBlob(sessionId: string, sha256: string, options?: RequestOptions): Promise<StoredBlob>;
  /**
   * The public health check (sent without the token): ok false (the daemon's 503) when the daemon is
   * there but its store cannot reach its database, `store` saying why.
   */
  health(options?: RequestOptions): Promise<DaemonHealth>;

  /**
   * A session's events with seq > afterSeq, replayed then live, each seq exactly once and in order,
   * reconnecting by itself (also when the stream stays silent, not even a ping, for
   * `reconnect.silenceLimitMs`). Ends when the signal aborts; throws an AgentError on 401, 404, an
   * event that does not validate, or when `reconnect.maxAttempts` attempts in a row fail. A session id
   * that is not a string or an afterSeq that is not a whole number from 0 throws invalid_command at
   * the call, before any request.
   */
  subscribe(sessionId: string, options?: SubscribeOptions): AsyncIterable<ProtocolEvent>;
}

type Limited = Pick<DaemonRequest, 'timeoutMs' | 'limitOption' | 'signal'>;

export function createTetherClient(options: TetherClientOptions): TetherClient {
  const connection = createDaemonConnection(options.url, options.token, options.fetch);
  const schedule = reconnectSchedule(options.reconnect);
  const requestTimeoutMs = checkTimeout(options.requestTimeoutMs ?? 30_000, 'requestTimeoutMs');
  const commandTimeoutMs = checkTimeout(options.commandTimeoutMs ?? 150_000, 'commandTimeoutMs');
  // A session id that is not a string would be sent as "undefined" and come back session_not_found.
  const sessionPath = (sessionId: unknown) => `/v1/sessions/${encodeURIComponent(checkSessionIdArgument(sessionId))}`;

  /** A call's limit and signal: its own timeoutMs, else the client's for that kind of call. */
  function limited(callOptions: RequestOptions | undefined, slow: boolean): Limited {
    const limitOption = slow ? 'commandTimeoutMs' : 'requestTimeoutMs';
    return {
      timeoutMs:
        callOptions?.timeoutMs === undefined
          ? slow
            ? commandTimeoutMs
            : requestTimeoutMs
          : checkTimeout(callOptions.timeoutMs, 'timeoutMs'),
      limitOption,
      signal: callOptions?.signal,
    };
  }

  async function dispatch<C extends Command>(command: C, callOptions?: RequestOptions): Promise<ReceiptFor<C>> {
    const body = await sendRequest(connection, {
      method: 'POST',
      path: '/v1/commands',
      body: command,
      ...limited(callOptions, true),
      // Only a well-formed pair is named in a message; the daemon refuses anything else before applying it.
      ...(CommandId.safeParse(command.commandId).success
        ? { command: { type: command.type, commandId: command.commandId } }
        : {}),
    });
    return parseReceipt(connection.url, command.type, body) as ReceiptFor<C>;
  }

  async function listSessions(listOptions: ListSessionsOptions = {}): Promise<SessionPage> {
    const query = new URLSearchParams();
    if (listOptions.state !== undefined) query.set('state', listOptions.state);
    if (listOptions.limit !== undefined) query.set('limit', String(listOptions.limit));
    if (listOptions.before !== undefined) query.set('before', listOptions.before);
    const search = query.toString() === '' ? '' : `?${query.toString()}`;
    return parseSessionPage(
      connection.url,
      await sendRequest(connection, { method: 'GET', path: `/v1/sessions${search}`, ...limited(listOptions, false) }),
    );
  }

  async function getProviders(callOptions?: RequestOptions): Promise<ProviderInfo[]> {
    return parseProviders(
      connection.url,
      await sendRequest(connection, { method: 'GET', path: '/v1/providers', ...limited(callOptions, false) }),
    );
  }

  return {
    dispatch,
    ...commandMethods<unknown, RequestOptions>(dispatch),

    async getSession(sessionId, callOptions) {
      return parseSnapshot(
        connection.url,
        await sendRequest(connection, { method: 'GET', path: sessionPath(sessionId), ...limited(callOptions, false) }),
      );
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
    getProviders,
    async getSessionDiff(sessionId, diffOptions = {}) {
      const query = diffOptions.maxBytes === undefined ? '' : `?maxBytes=${encodeURIComponent(diffOptions.maxBytes)}`;
      return parseSessionDiff(
        connection.url,
        await sendRequest(connection, {
          method: 'GET',
          path: `${sessionPath(sessionId)}/diff${query}`,
          ...limited(diffOptions, true),
        }),
      );
    },
    async deleteSession(sessionId, deleteOptions = {}) {
      const query = deleteOptions.discardWorkspaceChanges === true ? '?discardWorkspaceChanges=true' : '';
      const answer = await sendRequest(connection, {
        method: 'DELETE',
        path: `${sessionPath(sessionId)}${query}`,
        ...limited(deleteOptions, true),
      });
      // A daemon from before the delete answered what it did (204, no body): deleted, its workspace untold.
      return answer === undefined ? { sessionId, workspaceStatus: null } : parseDeletedSession(connection.url, answer);
    },
    async listModels(provider, callOptions) {
      // The daemon lists its default provider first.
      const name = provider ?? (await getProviders(callOptions))[0]?.name;
      if (name === undefined) throw invalidResponseError(connection.url, 'a provider list without a provider');
      return parseModelList(
        connection.url,
        await sendRequest(connection, {
          method: 'GET',
          path: `/v1/providers/${encodeURIComponent(name)}/models`,
          ...limited(callOptions, true),
        }),
      );
    },
    async readBlob(sessionId, sha256, callOptions) {
      return parseBlob(
        connection.url,
        await readBytes(connection, {
          method: 'GET',
          path: `${sessionPath(sessionId)}/blobs/${encodeURIComponent(sha256)}`,
          ...limited(callOptions, false),
        }),
      );
    },
    async health(callOptions) {
      return parseHealth(
        connection.url,
        await sendRequest(connection, {
          method: 'GET',
          path: '/health',
          authenticated: false,
          // A 503 with a health body is a daemon that is there but cannot reach its store.
          answerStatuses: [503],
          ...limited(callOptions, false),
        }),
      );
    },
    subscribe(sessionId, subscribeOptions = {}) {
      // Refused at the call, before any request: a bad start would otherwise reach the daemon as ?after=NaN.
      checkSessionIdArgument(sessionId);
      if (subscribeOptions.afterSeq !== undefined) checkStartSeq(subscribeOptions.afterSeq, '"afterSeq"');
      return endableSubscription(connection, sessionId, subscribeOptions, schedule);
    },
  };
}
