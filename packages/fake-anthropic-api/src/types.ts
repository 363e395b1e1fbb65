/** Public types of the fake Anthropic Messages API. */

/** Token counts reported to the client, exactly as scripted. */
export interface FakeUsage {
  /** `usage.input_tokens` in `message_start` (or the JSON message). */
  inputTokens: number;
  /** `usage.output_tokens` in `message_delta` (or the JSON message). */
  outputTokens: number;
  /** `usage.cache_read_input_tokens` in `message_start`. */
  cacheReadTokens: number;
  /** `usage.cache_creation_input_tokens` in `message_start`. */
  cacheCreationTokens: number;
}

/** One content block of a scripted assistant message. */
export type FakeBlock =
  /** Split into `chunks` `text_delta` events (default: about one per 20 characters). */
  | { type: 'text'; text: string; chunks?: number }
  /** Split into `chunks` `thinking_delta` events, then one `signature_delta`. */
  | { type: 'thinking'; thinking: string; chunks?: number; signature?: string }
  /** Streamed as `chunks` `input_json_delta` events (default: up to 3); a unique `toolu_` id is generated when `id` is omitted. */
  | { type: 'tool_use'; name: string; input: Record<string, unknown>; id?: string; chunks?: number };

/** An assistant message. */
export interface FakeMessageReply {
  kind?: 'message';
  content: FakeBlock[];
  usage?: Partial<FakeUsage>;
  /** Default: `tool_use` when a tool_use block is present, else `end_turn`. */
  stopReason?: 'end_turn' | 'tool_use' | 'max_tokens';
  /** Pause between SSE events (streaming) or before the answer (non-streaming). */
  delayMs?: number;
  /** Extra response headers (e.g. `anthropic-ratelimit-unified-*`, which the claude CLI reads for plan limits). */
  headers?: Record<string, string>;
}

/** An HTTP error with an Anthropic error body. */
export interface FakeErrorReply {
  kind: 'error';
  status: number;
  /** Default from the status: 400 invalid_request_error, 401 authentication_error, 403 permission_error,
   * 404 not_found_error, 413 request_too_large, 429 rate_limit_error, 529 overloaded_error, else api_error. */
  errorType?: string;
  message?: string;
  /** `retry-after` header; 429 defaults to 1. */
  retryAfterSeconds?: number;
  /** Extra response headers (e.g. a plan limit's 429 carries `anthropic-ratelimit-unified-status: rejected`). */
  headers?: Record<string, string>;
}

/** Streaming: headers and `message_start`, then nothing until the client disconnects, `releaseHeld()` or `close()`.
 * Non-streaming: no answer at all until then. */
export interface FakeHoldReply {
  kind: 'hold';
}

/** Streaming: the socket is destroyed after `afterDeltas` `content_block_delta` events (default 0: right after
 * `message_start`). Non-streaming: the socket is destroyed without an answer. */
export interface FakeDropConnectionReply {
  kind: 'drop_connection';
  afterDeltas?: number;
  /**
   * Streaming: after the deltas the stream stays open (held, like `hold`) until `releaseHeld()` or `close()`
   * destroys the socket, so a test can wait until the client has shown the deltas before the connection breaks.
   */
  holdBeforeDrop?: boolean;
}

/** Streaming: `message_start`, then an SSE `event: error` (default `overloaded_error`), then the stream ends.
 * Non-streaming: an HTTP error of that type (529 for `overloaded_error`, else 500). */
export interface FakeStreamErrorReply {
  kind: 'stream_error';
  errorType?: string;
}

/**
 * Streaming: `message_start` and one text delta, then a broken event. `cut_mid_event`: the first half of
 * a delta event's bytes, then the socket is destroyed. `invalid_json`: a whole `content_block_delta`
 * event whose data is not JSON, then the stream ends. Non-streaming: a 200 whose body is not JSON.
 */
export interface FakeMalformedStreamReply {
  kind: 'malformed_stream';
  variant: 'cut_mid_event' | 'invalid_json';
}

export type FakeReply =
  | FakeMessageReply
  | FakeErrorReply
  | FakeHoldReply
  | FakeDropConnectionReply
  | FakeStreamErrorReply
  | FakeMalformedStreamReply;

/** What a responder sees of a `/v1/messages` request. */
export interface FakeRequestView {
  /** The parsed JSON body. */
  body: unknown;
  /** `body.model` ('' when absent). */
  model: string;
  /** `body.stream === true`. */
  streaming: boolean;
  /** The text blocks of the last message whose role is `user`, joined with '\n'. */
  lastUserText: string;
  /** Every block of that message, in order (a string content is one text block). */
  lastUserBlocks: FakeUserBlock[];
  /** The files the client attached as synthetic Read results (the claude CLI's @-mentions), from every user message. */
  attachedFiles: FakeAttachedFile[];
  /** The tool_result blocks of that message. */
  toolResults: FakeToolResult[];
  /** The last user message asks for an `<analysis>` and a `<summary>` block (a compaction request). */
  isCompaction: boolean;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** The `x-claude-code-session-id` header (a subagent's requests carry its parent session's id). */
  sessionId: string | undefined;
  /** The request comes from a subagent (the CLI marks its billing system block with `cc_is_subagent=true`). */
  isSubagent: boolean;
}

/** One block of a user message as the fake read it. */
export type FakeUserBlock =
  | { type: 'text'; text: string }
  /** A base64 image: its declared media type and its data exactly as sent. */
  | { type: 'image'; mediaType: string; data: string }
  | { type: 'other'; blockType: string };

/** A file the client attached as a synthetic Read. */
export interface FakeAttachedFile {
  /** The Read's `file_path` (absolute). */
  filePath: string;
  /** The Read's result as the model sees it (line-numbered by the CLI: "1\tfirst line"). */
  content: string;
}

export interface FakeToolResult {
  toolUseId: string;
  /** String content, or the text blocks of an array content joined with '\n'. */
  content: string;
  isError: boolean;
}

/** Chooses a reply when the queue is empty; `undefined` falls through to the default reply. */
export type FakeResponder = (request: FakeRequestView) => FakeReply | undefined;

export type RecordedRequestKind = 'turn' | 'count_tokens' | 'probe' | 'compaction' | 'non_streaming' | 'other';

/** How a request was answered. */
export type RecordedReplyKind =
  | 'message'
  | 'error'
  | 'hold'
  | 'drop_connection'
  | 'stream_error'
  | 'malformed_stream'
  | 'count_tokens'
  | 'not_found'
  | 'bad_request';

/** One request as the fake received it. */
export interface RecordedRequest {
  /** 0-based arrival index. */
  readonly index: number;
  readonly method: string;
  /** URL path without the query, e.g. `/v1/messages`. */
  readonly path: string;
  /** Query parameters, e.g. `{ beta: 'true' }`. */
  readonly query: Record<string, string>;
  /** Lower-case header names; repeated headers joined with ', '. */
  readonly headers: Record<string, string>;
  /** The parsed JSON body (`undefined` when empty or not JSON). */
  readonly body: unknown;
  readonly kind: RecordedRequestKind;
  /** The responder's view, for `/v1/messages` requests. */
  readonly view: FakeRequestView | undefined;
  /** How the fake answered. */
  readonly replyKind: RecordedReplyKind;
  /** True when neither the queue nor the responder supplied the reply of a model request. */
  readonly unscripted: boolean;
  /** `Date.now()` at arrival. */
  readonly receivedAt: number;
  /** True once the client closed the connection before the fake finished answering. */
  readonly clientAborted: boolean;
}

export interface StartFakeAnthropicApiOptions {
  /** Used when the queue is empty. */
  responder?: FakeResponder;
  /** Default 0 (a random free port). */
  port?: number;
}

export interface WaitForRequestsOptions {
  kind?: RecordedRequestKind;
  /** Default 30 000. */
  timeoutMs?: number;
}

export interface FakeAnthropicApi {
  /** `http://127.0.0.1:<port>` (no `/v1`): the value for `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  readonly port: number;
  /** Every request in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Number of streams currently held open by `hold` replies. */
  readonly heldCount: number;
  /** FIFO replies for the next model requests (streaming turns and non-streaming fallbacks). */
  enqueue(...replies: FakeReply[]): void;
  /** Replies still queued. */
  readonly queued: number;
  /** Used when the queue is empty. */
  setResponder(responder: FakeResponder | undefined): void;
  /** Resolves with the matching requests once at least `count` have arrived; rejects on timeout. */
  waitForRequests(count: number, options?: WaitForRequestsOptions): Promise<RecordedRequest[]>;
  /** Ends every held-open stream by closing its socket. */
  releaseHeld(): void;
  /**
   * Lets every reply being written now (`delayMs`) write the rest of its events without pausing,
   * for a test that has seen what it needed from a slow stream. Replies that start later keep their pace.
   */
  hurryPacedReplies(): void;
  /** Stops the server, ends held streams and destroys keep-alive sockets. */
  close(): Promise<void>;
}
