/** The HTTP server: routing, request recording, held streams and shutdown. */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chooseReply } from './choose-reply.js';
import { errorBody } from './error-body.js';
import { newRequestId } from './ids.js';
import { buildRequestView, classifyMessagesRequest } from './request-view.js';
import { flattenHeaders, parseJson, readBody } from './request-body.js';
import { RequestLog } from './request-log.js';
import type { MutableRecordedRequest } from './request-log.js';
import { writeJson, writeReply } from './reply-writer.js';
import type {
  FakeAnthropicApi,
  FakeReply,
  FakeResponder,
  RecordedRequest,
  StartFakeAnthropicApiOptions,
  WaitForRequestsOptions,
} from './types.js';

/** Starts a fake Anthropic Messages API on 127.0.0.1 (a random port unless `port` is given). */
export async function startFakeAnthropicApi(options: StartFakeAnthropicApiOptions = {}): Promise<FakeAnthropicApi> {
  const api = new FakeAnthropicApiServer(options.responder);
  await api.listen(options.port ?? 0);
  return api;
}

class FakeAnthropicApiServer implements FakeAnthropicApi {
  readonly #server: Server;
  readonly #log = new RequestLog();
  readonly #queue: FakeReply[] = [];
  readonly #held = new Set<() => void>();
  readonly #inFlight = new Set<AbortController>();
  readonly #paced = new Set<AbortController>();
  #responder: FakeResponder | undefined;
  #port = 0;
  #closing: Promise<void> | undefined;

  constructor(responder: FakeResponder | undefined) {
    this.#responder = responder;
    this.#server = createServer({ keepAlive: true }, (req, res) => {
      void this.#handle(req, res);
    });
    this.#server.on('clientError', (_error, socket) => socket.destroy());
  }

  listen(port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, '127.0.0.1', () => {
        this.#server.off('error', reject);
        this.#port = (this.#server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}`;
  }

  get port(): number {
    return this.#port;
  }

  get requests(): readonly RecordedRequest[] {
    return this.#log.records;
  }

  get heldCount(): number {
    return this.#held.size;
  }

  get queued(): number {
    return this.#queue.length;
  }

  enqueue(...replies: FakeReply[]): void {
    this.#queue.push(...replies);
  }

  setResponder(responder: FakeResponder | undefined): void {
    this.#responder = responder;
  }

  waitForRequests(count: number, options?: WaitForRequestsOptions): Promise<RecordedRequest[]> {
    return this.#log.waitFor(count, options);
  }

  releaseHeld(): void {
    for (const release of [...this.#held]) release();
  }

  hurryPacedReplies(): void {
    for (const hurry of this.#paced) hurry.abort();
  }

  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#log.rejectAll('fake anthropic api: closed while waiting for requests');
      this.releaseHeld();
      for (const controller of this.#inFlight) controller.abort();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    req.on('error', () => {});
    res.on('error', () => {});
    const controller = new AbortController();
    this.#inFlight.add(controller);
    let record: MutableRecordedRequest | undefined;
    let closedByFake = false;
    res.on('close', () => {
      if (!res.writableFinished && !closedByFake && record !== undefined) record.clientAborted = true;
      controller.abort();
      this.#inFlight.delete(controller);
    });
    const requestId = newRequestId();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
    const headers = flattenHeaders(req.headers);
    let raw: Buffer = Buffer.alloc(0);
    let parsed: ReturnType<typeof parseJson>;
    try {
      raw = await readBody(req);
      parsed = parseJson(raw);
    } catch (error) {
      parsed = { ok: false, error: `unreadable body: ${error instanceof Error ? error.message : String(error)}` };
    }
    record = {
      index: this.#log.records.length,
      method: req.method ?? 'GET',
      path,
      query: Object.fromEntries(url.searchParams),
      headers,
      body: parsed.ok ? parsed.value : undefined,
      kind: 'other',
      view: undefined,
      replyKind: 'not_found',
      unscripted: false,
      receivedAt: Date.now(),
      clientAborted: false,
    };
    const ctx = { res, requestId };

    if (!parsed.ok) {
      record.replyKind = 'bad_request';
      this.#log.add(record);
      writeJson(
        ctx,
        400,
        errorBody('invalid_request_error', `fake api: the body is not valid JSON (${parsed.error})`, requestId),
      );
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      record.kind = 'count_tokens';
      record.replyKind = 'count_tokens';
      this.#log.add(record);
      writeJson(ctx, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      this.#log.add(record);
      writeJson(ctx, 404, errorBody('not_found_error', `fake api: no route for ${record.method} ${path}`, requestId));
      return;
    }

    const view = buildRequestView(parsed.value, headers);
    record.view = view;
    record.kind = classifyMessagesRequest(parsed.value, view);
    const choice = chooseReply(record.kind, view, {
      shiftQueued: () => this.#queue.shift(),
      responder: this.#responder,
    });
    record.replyKind = choice.reply.kind ?? 'message';
    record.unscripted = choice.unscripted;
    // A held reply counts as held from the moment its request is recorded: a test that saw the
    // request and calls releaseHeld() before the stream is set up must not see its release lost.
    let releasedEarly = false;
    const releaseEarly = () => {
      releasedEarly = true;
    };
    const held =
      choice.reply.kind === 'hold' || (choice.reply.kind === 'drop_connection' && choice.reply.holdBeforeDrop);
    if (held) this.#held.add(releaseEarly);
    this.#log.add(record);
    const hurry = new AbortController();
    this.#paced.add(hurry);
    try {
      await writeReply(choice.reply, {
        ...ctx,
        pacing: AbortSignal.any([controller.signal, hurry.signal]),
        model: view.model,
        streaming: view.streaming,
        signal: controller.signal,
        hold: (release) => {
          this.#held.delete(releaseEarly);
          if (releasedEarly) {
            release();
            return () => undefined;
          }
          this.#held.add(release);
          return () => this.#held.delete(release);
        },
        destroy: () => {
          closedByFake = true;
          res.destroy();
        },
      });
    } finally {
      // A reply that ended before it set up its hold (the client went away) leaves nothing held.
      this.#held.delete(releaseEarly);
      this.#paced.delete(hurry);
    }
  }
}
