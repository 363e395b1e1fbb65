import type {
  AgentSdkOptions,
  AgentSdkQuery,
  AgentSdkQueryFunction,
  AgentSdkUserMessage,
} from '@tether/provider-claude';

/** What a scripted query's script can do: read Tether's input, yield frames, ask, end. */
export interface ScriptedQueryContext {
  /** The options Tether passed to query() (canUseTool among them). */
  readonly options: AgentSdkOptions;
  /** The conversation this agent was started for (--session-id or --resume), as a CLI reports it. */
  readonly conversationId: string;
  /** The next user line Tether streams in; undefined once Tether ended its input. */
  nextInput(): Promise<AgentSdkUserMessage | undefined>;
  /** Yields one message (a stream-json frame) to Tether. */
  emit(message: object): void;
  /** Ends the message stream normally. */
  end(): void;
  /** Ends the message stream by throwing (the text must never reach Tether's events). */
  fail(message?: string): void;
  /** Calls canUseTool as the SDK does for a CLI prompt; `abort` takes the prompt back. */
  ask(
    toolName: string,
    input: Record<string, unknown>,
    prompt: { toolUseId: string; requestId?: string; aborted?: boolean },
  ): { answer: Promise<unknown>; signal: AbortSignal; abort(): void };
}

/** Control methods a test replaces (interrupt receipts, refusals, missing methods via `null`). */
export type ScriptedQueryControls = {
  [Method in 'interrupt' | 'setPermissionMode' | 'setModel' | 'getContextUsage' | 'initializationResult']?:
    | ((...args: never[]) => Promise<unknown>)
    | null;
};

export interface ScriptedQuery extends AgentSdkQuery {
  readonly options: AgentSdkOptions;
  readonly calls: { interrupts: number; models: (string | undefined)[]; modes: string[]; closed: boolean };
}

/**
 * A deterministic stand-in for the Agent SDK's query(), for tests of the sdk transport: each
 * query() runs `script` with a context to read input, yield frames and call canUseTool.
 */
export function scriptedAgentSdkQuery(
  script: (context: ScriptedQueryContext) => void | Promise<void>,
  controls: ScriptedQueryControls = {},
): { query: AgentSdkQueryFunction; queries: ScriptedQuery[] } {
  const queries: ScriptedQuery[] = [];
  const query: AgentSdkQueryFunction = ({ prompt, options }) => {
    const buffered: unknown[] = [];
    let ending: { error?: Error } | null = null;
    let wake: (() => void) | null = null;
    const notify = () => {
      wake?.();
      wake = null;
    };
    const input = prompt[Symbol.asyncIterator]();
    const calls = { interrupts: 0, models: [] as (string | undefined)[], modes: [] as string[], closed: false };
    const context: ScriptedQueryContext = {
      options,
      conversationId: options.sessionId ?? options.resume ?? '00000000-0000-4000-8000-000000000001',
      async nextInput() {
        const next = await input.next();
        return next.done ? undefined : next.value;
      },
      emit(message) {
        buffered.push(message);
        notify();
      },
      end() {
        ending ??= {};
        notify();
      },
      fail(message = 'scripted SDK failure with details that must not leak') {
        ending ??= { error: new Error(message) };
        notify();
      },
      ask(toolName, toolInput, prompt) {
        const controller = new AbortController();
        if (prompt.aborted) controller.abort();
        const answer = options.canUseTool(toolName, toolInput, {
          signal: controller.signal,
          toolUseID: prompt.toolUseId,
          ...(prompt.requestId ? { requestId: prompt.requestId } : {}),
        });
        return { answer, signal: controller.signal, abort: () => controller.abort() };
      },
    };
    const method = <Name extends keyof ScriptedQueryControls>(
      name: Name,
      fallback: (...args: never[]) => Promise<unknown>,
    ) => {
      const given = controls[name];
      return given === null ? undefined : (given ?? fallback);
    };
    const handle: ScriptedQuery = {
      options,
      calls,
      async *[Symbol.asyncIterator]() {
        for (;;) {
          if (buffered.length > 0) {
            yield buffered.shift();
            continue;
          }
          if (ending) {
            if (ending.error) throw ending.error;
            return;
          }
          await new Promise<void>((resolve) => {
            wake = resolve;
          });
        }
      },
      interrupt: async () => {
        calls.interrupts += 1;
        return method('interrupt', async () => ({ still_queued: [] }))!();
      },
      setPermissionMode: async (mode) => {
        calls.modes.push(mode);
        return method('setPermissionMode', async () => ({ mode }))!();
      },
      setModel: async (model) => {
        calls.models.push(model);
        return method('setModel', async () => undefined)!();
      },
      close() {
        calls.closed = true;
        ending ??= {};
        notify();
      },
    };
    const getContextUsage = method('getContextUsage', async () => ({
      totalTokens: 10,
      maxTokens: 100,
      percentage: 10,
      model: 'scripted',
      categories: [],
    }));
    if (getContextUsage) handle.getContextUsage = getContextUsage;
    const initializationResult = method('initializationResult', async () => ({ models: [] }));
    if (initializationResult) handle.initializationResult = initializationResult;
    queries.push(handle);
    void Promise.resolve().then(() => script(context));
    return handle;
  };
  return { query, queries };
}

/** The frames of one ordinary turn for the user line stamped `uuid`: lifecycle, init, a delta, the stop, a result. */
export function scriptedTurnFrames(
  uuid: string,
  text: string,
  options: { sessionId?: string; stamped?: boolean } = {},
): object[] {
  const sessionId = options.sessionId ?? '00000000-0000-4000-8000-000000000001';
  const stamps = options.stamped === false ? {} : { user_message_uuid: uuid, user_message_uuids: [uuid] };
  return [
    ...(options.stamped === false ? [] : [{ type: 'command_lifecycle', command_uuid: uuid, state: 'started' }]),
    {
      type: 'system',
      subtype: 'init',
      session_id: sessionId,
      model: 'claude-scripted',
      permissionMode: 'default',
      ...(options.stamped === false ? {} : { user_message_uuids: [uuid] }),
    },
    {
      type: 'stream_event',
      event: { type: 'message_start', message: { id: 'msg_scripted' } },
      parent_tool_use_id: null,
      ...stamps,
    },
    {
      type: 'stream_event',
      event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
      parent_tool_use_id: null,
    },
    {
      type: 'stream_event',
      event: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } },
      parent_tool_use_id: null,
    },
    {
      type: 'result',
      subtype: 'success',
      is_error: false,
      session_id: sessionId,
      num_turns: 1,
      stop_reason: 'end_turn',
      errors: [],
      usage: { input_tokens: 3, output_tokens: 2, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      ...stamps,
    },
  ];
}
