import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentError, httpStatusForCode, parseCommand, toAgentError } from '@tether/protocol';
import type {
  Command,
  EventBody,
  ModelList,
  ProtocolEvent,
  Receipt,
  SessionDiff,
  SessionSnapshot,
} from '@tether/protocol';
import { defaultReceipt, sampleModelList, sampleProviders, withEnvelope } from './sample-records.js';

/**
 * A stand-in for `tether serve` with just what the client's tests need of docs/api.md: commands,
 * session reads, the SSE event stream (replay from Last-Event-ID or ?after, then live), bearer
 * auth. Every fault a test needs is a method: drop a stream, overflow it, answer 5xx, misbehave.
 */

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

/** A raw answer, for daemons (or proxies) that do not speak Tether. */
export interface RawAnswer {
  readonly httpStatus: number;
  readonly rawBody: string;
}

export type CommandAnswer = Receipt | AgentError | RawAnswer;

export interface FakeDaemon {
  readonly url: string;
  readonly token: string;
  readonly requests: RecordedRequest[];
  /** Decides the answer to each valid command (default: a plausible receipt). */
  answerCommand: (command: Command) => CommandAnswer;
  /** Decides the answer to GET /v1/providers/:name/models (default: sampleModelList for claude, 404 otherwise). */
  answerModels: (provider: string) => ModelList | AgentError | RawAnswer;
  /** Decides the answer to GET /v1/sessions/:id/diff (default: capability_unsupported, as for a directory workspace). */
  answerDiff: (sessionId: string, query: URLSearchParams) => SessionDiff | AgentError | RawAnswer;
  /**
   * Decides whether DELETE /v1/sessions/:id is refused (default: session_open for an open session);
   * null deletes it.
   */
  refuseDelete: (snapshot: SessionSnapshot, query: URLSearchParams) => AgentError | null;
  /** Answer a delete as daemons before DeletedSession did: 204, no body. */
  deleteWithoutAnswer: boolean;
  /** A blob GET /v1/sessions/:id/blobs/:sha256 answers (with this Content-Type); any other is blob_not_found. */
  addBlob(sessionId: string, sha256: string, blob: { contentType: string; bytes: Uint8Array }): void;
  /** Misbehave: replay from seq 0 whatever the client asked, so it receives duplicates. */
  replayFromStart: boolean;
  addSession(snapshot: SessionSnapshot): void;
  /** Stores the next event of the session and streams it to its subscribers unless `live` is false. */
  append(sessionId: string, body: EventBody, options?: { live?: boolean }): ProtocolEvent;
  /** Writes text as is to the session's open streams (invalid frames, partial frames). */
  writeRaw(sessionId: string, text: string): void;
  ping(sessionId: string): void;
  /** Sends `event: overflow` and ends the session's streams, as the daemon does to a slow reader. */
  overflow(sessionId: string): void;
  /** Cuts the session's streams mid-response (after writing `partial`, when given). */
  drop(sessionId: string, partial?: string): void;
  /** The next `count` event-stream requests answer this status with a Tether error body. */
  failSubscriptions(status: 500 | 503, count: number): void;
  subscriberCount(sessionId: string): number;
  eventRequests(sessionId: string): RecordedRequest[];
  /** Resolves once the condition holds; re-checked on every request and stream change. */
  waitFor(condition: () => boolean): Promise<void>;
  close(): Promise<void>;
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

function sendError(response: ServerResponse, error: AgentError): void {
  sendJson(response, httpStatusForCode(error.code), { error: error.toObject() });
}

function isRawAnswer(answer: object): answer is RawAnswer {
  return 'rawBody' in answer && 'httpStatus' in answer;
}

function sendRaw(response: ServerResponse, answer: RawAnswer): void {
  response.writeHead(answer.httpStatus, { 'content-type': 'text/html' }).end(answer.rawBody);
}

function frame(event: ProtocolEvent): string {
  return `id: ${event.seq}\ndata: ${JSON.stringify(event)}\n\n`;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeDaemon(options: { token?: string } = {}): Promise<FakeDaemon> {
  const token = options.token ?? 'test-token';
  const sessions = new Map<string, SessionSnapshot>();
  const events = new Map<string, ProtocolEvent[]>();
  const streams = new Map<string, Set<ServerResponse>>();
  const waiters = new Set<() => void>();
  const requests: RecordedRequest[] = [];
  const blobs = new Map<string, { contentType: string; bytes: Uint8Array }>();
  let failingSubscriptions = { status: 503 as 500 | 503, count: 0 };

  const changed = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const streamsOf = (sessionId: string) => {
    let set = streams.get(sessionId);
    if (!set) {
      set = new Set();
      streams.set(sessionId, set);
    }
    return set;
  };
  /** Removes the streams at once, so events appended right after are replayed, not streamed. */
  const takeStreams = (sessionId: string) => {
    const taken = [...streamsOf(sessionId)];
    streamsOf(sessionId).clear();
    changed();
    return taken;
  };

  function streamEvents(
    sessionId: string,
    request: IncomingMessage,
    response: ServerResponse,
    query: URLSearchParams,
  ): void {
    if (failingSubscriptions.count > 0) {
      failingSubscriptions.count -= 1;
      const code = failingSubscriptions.status === 503 ? 'runtime_stopped' : 'internal_error';
      sendError(
        response,
        new AgentError({ code, message: 'The fake daemon is failing this subscription on purpose.' }),
      );
      return;
    }
    if (!sessions.has(sessionId)) {
      sendError(response, new AgentError({ code: 'session_not_found', message: 'No session has that id.' }));
      return;
    }
    const lastEventId = request.headers['last-event-id'];
    const start = daemon.replayFromStart
      ? 0
      : Number(typeof lastEventId === 'string' ? lastEventId : (query.get('after') ?? 0));
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.flushHeaders();
    for (const event of events.get(sessionId) ?? []) if (event.seq > start) response.write(frame(event));
    streamsOf(sessionId).add(response);
    response.on('close', () => {
      streamsOf(sessionId).delete(response);
      changed();
    });
    changed();
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const text = await readBody(request);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    requests.push({
      method: request.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: request.headers,
      body,
    });
    changed();

    if (url.pathname === '/health') return sendJson(response, 200, { ok: true, version: '0.1.0' });
    if (request.headers.authorization !== `Bearer ${token}`) {
      response.writeHead(401).end();
      return;
    }
    const sessionMatch = /^\/v1\/sessions\/([^/]+)(\/events)?$/.exec(url.pathname);
    const modelsMatch = /^\/v1\/providers\/([^/]+)\/models$/.exec(url.pathname);
    if (request.method === 'GET' && modelsMatch) {
      const answer = daemon.answerModels(decodeURIComponent(modelsMatch[1]!));
      if (AgentError.isInstance(answer)) return sendError(response, answer);
      if (isRawAnswer(answer)) return sendRaw(response, answer);
      return sendJson(response, 200, answer);
    }
    const diffMatch = /^\/v1\/sessions\/([^/]+)\/diff$/.exec(url.pathname);
    if (request.method === 'GET' && diffMatch) {
      const answer = daemon.answerDiff(decodeURIComponent(diffMatch[1]!), url.searchParams);
      if (AgentError.isInstance(answer)) return sendError(response, answer);
      if (isRawAnswer(answer)) return sendRaw(response, answer);
      return sendJson(response, 200, answer);
    }
    const blobMatch = /^\/v1\/sessions\/([^/]+)\/blobs\/([^/]+)$/.exec(url.pathname);
    if (request.method === 'GET' && blobMatch) {
      const blob = blobs.get(`${decodeURIComponent(blobMatch[1]!)}/${decodeURIComponent(blobMatch[2]!)}`);
      if (!blob)
        return sendError(
          response,
          new AgentError({ code: 'blob_not_found', message: 'This session has no such blob.' }),
        );
      response.writeHead(200, { 'content-type': blob.contentType, 'content-length': blob.bytes.byteLength });
      response.end(blob.bytes);
      return;
    }
    if (request.method === 'POST' && url.pathname === '/v1/commands') {
      if (typeof body !== 'object')
        return sendError(response, new AgentError({ code: 'invalid_command', message: 'The body is not JSON.' }));
      let answer: CommandAnswer;
      try {
        answer = daemon.answerCommand(parseCommand(body));
      } catch (error) {
        answer = toAgentError(error);
      }
      if (AgentError.isInstance(answer)) return sendError(response, answer);
      if (isRawAnswer(answer)) return sendRaw(response, answer);
      return sendJson(response, 200, answer);
    }
    if (request.method === 'GET' && url.pathname === '/v1/sessions') return listSessions(url.searchParams, response);
    if (request.method === 'GET' && url.pathname === '/v1/providers') return sendJson(response, 200, sampleProviders);
    if (sessionMatch) {
      const sessionId = decodeURIComponent(sessionMatch[1]!);
      if (request.method === 'GET' && sessionMatch[2])
        return streamEvents(sessionId, request, response, url.searchParams);
      const snapshot = sessions.get(sessionId);
      if (!snapshot)
        return sendError(response, new AgentError({ code: 'session_not_found', message: 'No session has that id.' }));
      if (request.method === 'GET' && !sessionMatch[2]) return sendJson(response, 200, snapshot);
      if (request.method === 'DELETE' && !sessionMatch[2]) {
        const refusal = daemon.refuseDelete(snapshot, url.searchParams);
        if (refusal) return sendError(response, refusal);
        sessions.delete(sessionId);
        events.delete(sessionId);
        if (daemon.deleteWithoutAnswer) return void response.writeHead(204).end();
        return sendJson(response, 200, { sessionId, workspaceStatus: snapshot.workspaceStatus });
      }
    }
    sendError(
      response,
      new AgentError({ code: 'route_not_found', message: `No route ${request.method} ${url.pathname}.` }),
    );
  }

  function listSessions(query: URLSearchParams, response: ServerResponse): void {
    const limit = Number(query.get('limit') ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
      return sendError(response, new AgentError({ code: 'invalid_command', message: 'limit must be 1 to 500.' }));
    }
    const state = query.get('state');
    const matching = [...sessions.values()]
      .filter((snapshot) => state === null || snapshot.state === state)
      .sort((left, right) => right.createdAt.localeCompare(left.createdAt));
    // The cursor is the id of the last session of the previous page (opaque to the client).
    const before = query.get('before');
    const start = before === null ? 0 : matching.findIndex((snapshot) => snapshot.sessionId === before) + 1;
    const page = matching.slice(start, start + limit);
    const next = start + limit < matching.length ? page.at(-1)!.sessionId : null;
    sendJson(response, 200, { sessions: page, next });
  }

  const server = createServer((request, response) => {
    route(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, toAgentError(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const daemon: FakeDaemon = {
    url: `http://127.0.0.1:${port}`,
    token,
    requests,
    answerCommand: defaultReceipt,
    answerModels: (provider) =>
      provider === 'claude'
        ? sampleModelList
        : new AgentError({ code: 'route_not_found', message: `No provider named "${provider}" is configured.` }),
    answerDiff: () =>
      new AgentError({
        code: 'capability_unsupported',
        message: 'This session works in a plain directory: there is no diff to show.',
      }),
    refuseDelete: (snapshot) =>
      snapshot.state === 'closed'
        ? null
        : new AgentError({ code: 'session_open', message: 'The session is open; close it first.' }),
    addBlob(sessionId, sha256, blob) {
      blobs.set(`${sessionId}/${sha256}`, blob);
    },
    replayFromStart: false,
    deleteWithoutAnswer: false,
    addSession(snapshot) {
      sessions.set(snapshot.sessionId, snapshot);
      events.set(snapshot.sessionId, events.get(snapshot.sessionId) ?? []);
    },
    append(sessionId, body, appendOptions = {}) {
      const log = events.get(sessionId);
      if (!log) throw new Error(`the fake daemon has no session ${sessionId}`);
      const event = withEnvelope(sessionId, log.length + 1, body);
      log.push(event);
      if (appendOptions.live !== false) for (const stream of streamsOf(sessionId)) stream.write(frame(event));
      return event;
    },
    writeRaw(sessionId, text) {
      for (const stream of streamsOf(sessionId)) stream.write(text);
    },
    ping(sessionId) {
      daemon.writeRaw(sessionId, ': ping\n\n');
    },
    overflow(sessionId) {
      const lastSeq = events.get(sessionId)?.length ?? 0;
      for (const stream of takeStreams(sessionId))
        stream.end(`event: overflow\ndata: ${JSON.stringify({ lastSeq })}\n\n`);
    },
    drop(sessionId, partial = '') {
      // Destroy only once what was written reached the socket, so the client really reads `partial`.
      for (const stream of takeStreams(sessionId)) stream.write(partial, () => stream.socket?.destroy());
    },
    failSubscriptions(status, count) {
      failingSubscriptions = { status, count };
    },
    subscriberCount: (sessionId) => streamsOf(sessionId).size,
    eventRequests: (sessionId) => requests.filter((request) => request.path === `/v1/sessions/${sessionId}/events`),
    waitFor(condition) {
      return new Promise((resolve) => {
        const check = () => {
          if (!condition()) return;
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  return daemon;
}
