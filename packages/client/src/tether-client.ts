import {
  type Command,
  type DeleteSessionOptions,
  type ModelList,
  type ProtocolEvent,
  type ReceiptFor,
  type SessionDiff,
  type SessionSnapshot,
  type SessionState,
  type StoredBlob,
  type TetherSurface,
  commandMethods,
} from '@tether/protocol';
import { invalidResponseError } from './client-errors.js';
import { createDaemonConnection, readBytes, sendRequest } from './daemon-connection.js';
import {
  type DaemonHealth,
  type ProviderInfo,
  type SessionPage,
  parseBlob,
  parseHealth,
  parseModelList,
  parseProviders,
  parseReceipt,
  parseSessionDiff,
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
export interface TetherClient extends TetherSurface {
  /** One page, newest first; pass `next` back as `before` for the following one. */
  listSessions(options?: ListSessionsOptions): Promise<SessionPage>;
  /** Every matching session, following the cursors page by page. */
  listAllSessions(filter?: SessionFilter): Promise<SessionSnapshot[]>;
  getProviders(): Promise<ProviderInfo[]>;
  /** The provider's models (GET /v1/providers/:name/models); without a name, the daemon's default provider's (the first it lists). */
  listModels(provider?: string): Promise<ModelList>;
  /**
   * The session's work against the commit its worktree started from (GET /v1/sessions/:id/diff):
   * every changed file with its line counts and the unified diff, cut at maxBytes (the daemon's
   * default 1 MiB, at most 16 MiB). capability_unsupported for a directory workspace.
   */
  getSessionDiff(sessionId: string, options?: { readonly maxBytes?: number }): Promise<SessionDiff>;
  /**
   * Deletes a closed session (DELETE /v1/sessions/:id): session_open while it is open;
   * workspace_has_changes (its message names the worktree and branch) when its worktree holds work, unless
   * discardWorkspaceChanges, which removes the worktree and its branch too.
   */
  deleteSession(sessionId: string, options?: DeleteSessionOptions): Promise<void>;
  /** An image a turn of the session carried, as bytes with its media type (GET /v1/sessions/:id/blobs/:sha256). */
  readBlob(sessionId: string, sha256: string): Promise<StoredBlob>;
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

  async function listSessions(listOptions: ListSessionsOptions = {}): Promise<SessionPage> {
    const query = new URLSearchParams();
    if (listOptions.state !== undefined) query.set('state', listOptions.state);
    if (listOptions.limit !== undefined) query.set('limit', String(listOptions.limit));
    if (listOptions.before !== undefined) query.set('before', listOptions.before);
    const search = query.toString() === '' ? '' : `?${query.toString()}`;
    return parseSessionPage(
      connection.url,
      await sendRequest(connection, { method: 'GET', path: `/v1/sessions${search}` }),
    );
  }

  async function getProviders(): Promise<ProviderInfo[]> {
    return parseProviders(connection.url, await sendRequest(connection, { method: 'GET', path: '/v1/providers' }));
  }

  return {
    dispatch,
    ...commandMethods(dispatch),

    async getSession(sessionId) {
      return parseSnapshot(
        connection.url,
        await sendRequest(connection, { method: 'GET', path: sessionPath(sessionId) }),
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
        await sendRequest(connection, { method: 'GET', path: `${sessionPath(sessionId)}/diff${query}` }),
      );
    },
    async deleteSession(sessionId, deleteOptions = {}) {
      const query = deleteOptions.discardWorkspaceChanges === true ? '?discardWorkspaceChanges=true' : '';
      await sendRequest(connection, { method: 'DELETE', path: `${sessionPath(sessionId)}${query}` });
    },
    async listModels(provider) {
      // The daemon lists its default provider first.
      const name = provider ?? (await getProviders())[0]?.name;
      if (name === undefined) throw invalidResponseError(connection.url, 'a provider list without a provider');
      return parseModelList(
        connection.url,
        await sendRequest(connection, { method: 'GET', path: `/v1/providers/${encodeURIComponent(name)}/models` }),
      );
    },
    async readBlob(sessionId, sha256) {
      return parseBlob(
        connection.url,
        await readBytes(connection, `${sessionPath(sessionId)}/blobs/${encodeURIComponent(sha256)}`),
      );
    },
    async health() {
      return parseHealth(
        connection.url,
        await sendRequest(connection, { method: 'GET', path: '/health', authenticated: false }),
      );
    },
    subscribe: (sessionId, subscribeOptions = {}) =>
      subscribeToEvents(connection, sessionId, subscribeOptions, schedule),
  };
}
