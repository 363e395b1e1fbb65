import { type AcpHost, type AcpSessionPage, runAcpAgent } from '@tether/acp';
import {
  type ClientCapabilities,
  type ClientContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  PROTOCOL_VERSION,
  type PromptResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  client,
  methods,
  ndJsonStream,
} from '@tether/acp/test-support';
import type { ProviderCapabilities } from '@tether/protocol';
import { type AgentRuntime, decodeSessionCursor, encodeSessionCursor } from '@tether/runtime';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach } from 'vitest';

/**
 * The AcpHost over a runtime in this process, as a test builds it (the CLI has the production one):
 * the runtime's surface, plus cursor pages over its listing and its one provider's capabilities.
 */
export function runtimeHost(runtime: AgentRuntime): AcpHost {
  const extra = {
    async listSessionPage(options: { cursor?: string; limit: number }): Promise<AcpSessionPage> {
      const before = options.cursor ? decodeSessionCursor(options.cursor, 'Not a cursor of this host.') : undefined;
      const sessions = await runtime.listSessions({ limit: options.limit + 1, ...(before ? { before } : {}) });
      const page = sessions.slice(0, options.limit);
      const last = page.at(-1);
      return { sessions: page, nextCursor: sessions.length > options.limit && last ? encodeSessionCursor(last) : null };
    },
    async providerCapabilities(): Promise<ProviderCapabilities> {
      return runtime.providers[0]!.capabilities as ProviderCapabilities;
    },
  };
  return new Proxy(runtime, {
    get(target, key) {
      if (key in extra) return extra[key as keyof typeof extra];
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as unknown as AcpHost;
}

export interface ClientBehaviour {
  readonly capabilities?: ClientCapabilities;
  readonly onPermission?: (
    request: RequestPermissionRequest,
  ) => Promise<RequestPermissionResponse> | RequestPermissionResponse;
  readonly onElicitation?: (
    request: CreateElicitationRequest,
  ) => Promise<CreateElicitationResponse> | CreateElicitationResponse;
}

export interface AcpPair {
  readonly agent: ClientContext;
  /** Every session/update the client received, in order. */
  readonly notifications: SessionNotification[];
  /** Updates of one session, of one kind. */
  updatesOf<Kind extends SessionUpdate['sessionUpdate']>(
    sessionId: string,
    kind: Kind,
  ): Extract<SessionUpdate, { sessionUpdate: Kind }>[];
  /** The text of a session's agent_message_chunk updates, joined. */
  agentText(sessionId: string): string;
  /** session/new in `cwd`, with no MCP servers: the new session's id. */
  newSession(cwd: string): Promise<string>;
  /** session/prompt with one text block: resolves with its answer once the prompt ends. */
  prompt(sessionId: string, text: string): Promise<PromptResponse>;
  /** Closes the client's side (the editor quits) and resolves when runAcpAgent has returned. */
  close(): Promise<void>;
  /** Resolves when runAcpAgent returns. */
  readonly agentDone: Promise<void>;
  readonly logs: string[];
}

/** runAcpAgent over an in-memory stream pair, with the SDK's client on the other end, initialized. */
export async function connectClient(host: AcpHost, behaviour: ClientBehaviour = {}): Promise<AcpPair> {
  const toAgent = new TransformStream<Uint8Array, Uint8Array>();
  const toClient = new TransformStream<Uint8Array, Uint8Array>();
  const logs: string[] = [];
  const log = (message: string, fields?: Readonly<Record<string, unknown>>) => {
    logs.push(`${message} ${JSON.stringify(fields ?? {})}`);
  };
  const agentDone = runAcpAgent({
    host,
    input: toAgent.readable,
    output: toClient.writable,
    log: { info: log, error: log },
  });
  const notifications: SessionNotification[] = [];
  let app = client({ name: 'tether-test-client' }).onNotification(methods.client.session.update, ({ params }) => {
    notifications.push(params);
  });
  if (behaviour.onPermission) {
    const onPermission = behaviour.onPermission;
    app = app.onRequest(methods.client.session.requestPermission, ({ params }) => onPermission(params));
  }
  if (behaviour.onElicitation) {
    const onElicitation = behaviour.onElicitation;
    app = app.onRequest(methods.client.elicitation.create, ({ params }) => onElicitation(params));
  }
  const connection = app.connect(ndJsonStream(toAgent.writable, toClient.readable));
  await connection.agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: behaviour.capabilities ?? {},
  });
  function updatesOf<Kind extends SessionUpdate['sessionUpdate']>(sessionId: string, kind: Kind) {
    return notifications
      .filter((notification) => notification.sessionId === sessionId && notification.update.sessionUpdate === kind)
      .map((notification) => notification.update as Extract<SessionUpdate, { sessionUpdate: Kind }>);
  }
  return {
    agent: connection.agent,
    notifications,
    updatesOf,
    agentText(sessionId) {
      return updatesOf(sessionId, 'agent_message_chunk')
        .map((update) => (update.content.type === 'text' ? update.content.text : ''))
        .join('');
    },
    async newSession(cwd) {
      return (await connection.agent.request(methods.agent.session.new, { cwd, mcpServers: [] })).sessionId;
    },
    prompt(sessionId, text) {
      return connection.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
    },
    async close() {
      connection.close();
      await toAgent.writable.close();
      await agentDone;
    },
    agentDone,
    logs,
  };
}

/** A test environment (real binary, fake API), its runtime and an initialized client connected to it. */
export async function startAcp(
  behaviour: ClientBehaviour = {},
  options: { sandbox?: boolean } = {},
): Promise<{ environment: ClaudeTestEnvironment; runtime: AgentRuntime; pair: AcpPair; cleanup(): Promise<void> }> {
  const environment = await createClaudeTestEnvironment({ sandbox: options.sandbox ?? false });
  const runtime = await environment.runtime();
  const pair = await connectClient(runtimeHost(runtime), behaviour);
  return {
    environment,
    runtime,
    pair,
    async cleanup() {
      await pair.close().catch(() => {});
      await environment.cleanup();
    },
  };
}

/** startAcp for the tests of one describe block: each test's environment is cleaned up after it. */
export function useAcp(): typeof startAcp {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });
  return async (...args) => {
    const started = await startAcp(...args);
    cleanup = started.cleanup;
    return started;
  };
}
