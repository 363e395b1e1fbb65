import {
  Command,
  ImageMediaType,
  InputPart,
  ModelList,
  ChangedFile,
  DeletedSession,
  ProtocolEvent,
  Receipt,
  SerializedAgentError,
  SessionDiff,
  SessionSnapshot,
  SubmittedInputPart,
  Workspace,
  WorkspaceStatus,
  diffLimits,
} from '@tether/protocol';
import { z } from 'zod';
import { VERSION } from '../version.js';
import { ClientFrame, ServerFrame } from '../websocket/websocket-frames.js';
import { ErrorResponse, Health, ProviderList, SessionPage, Unhealthy } from './api-schemas.js';

type JsonObject = Record<string, unknown>;

const reference = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string) => ({ 'application/json': { schema: reference(name) } });

/** The error answers a route can give, all with the one error body. */
function errors(...statuses: number[]): JsonObject {
  return Object.fromEntries(
    statuses.map((status) => [
      String(status),
      { description: 'An error (see the code).', content: json('ErrorResponse') },
    ]),
  );
}

const authErrors = {
  '401': { description: 'Missing or wrong bearer token (empty body).' },
  '403': { description: 'Foreign Host or Origin (empty body).' },
};
const sessionIdParameter = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^ses_[0-9a-f]{32}$' },
};
const providerNameParameter = {
  name: 'name',
  in: 'path',
  required: true,
  description: 'A provider of GET /v1/providers (e.g. "claude").',
  schema: { type: 'string' },
};
const sha256Parameter = {
  name: 'sha256',
  in: 'path',
  required: true,
  description: "The image's sha256 as run.started records it.",
  schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
};

/** JSON Schemas of the given zod schemas, named, each a component. */
function componentSchemas(schemas: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, JsonObject> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(schemas)) registry.add(schema, { id });
  const generated = z.toJSONSchema(registry, {
    uri: (id) => `#/components/schemas/${id}`,
    io,
    unrepresentable: 'any',
  }) as { schemas: Record<string, JsonObject> };
  return Object.fromEntries(
    Object.entries(generated.schemas).map(([id, schema]) => {
      // OpenAPI 3.1 speaks JSON Schema 2020-12 already; the per-schema $schema/$id would only confuse tools.
      const { $schema: _schema, $id: _id, ...rest } = schema;
      return [id, rest];
    }),
  );
}

/** The variant of a oneOf whose `type` is the given constant, with its properties. */
function variantOfType(schema: JsonObject | undefined, type: string): Record<string, JsonObject> | undefined {
  const variants = (schema?.oneOf ?? []) as JsonObject[];
  const variant = variants.find(
    (candidate) =>
      ((candidate.properties as Record<string, { const?: unknown }> | undefined)?.type?.const ?? null) === type,
  );
  return variant?.properties as Record<string, JsonObject> | undefined;
}

/**
 * Where the schemas are looser than what a host should send, the document names the real shape:
 * submit_turn's input is checked part by part after the command's shape (an unknown part type is
 * capability_unsupported, not a malformed command), so its schema takes any `{type}` object; a
 * WebSocket `command` frame's command is checked by the runtime like a POSTed one.
 */
function documentLooseInputs(inputs: Record<string, JsonObject>): Record<string, JsonObject> {
  const submitTurn = variantOfType(inputs.Command, 'submit_turn');
  if (submitTurn?.input) submitTurn.input = { ...submitTurn.input, items: reference('SubmittedInputPart') };
  const commandFrame = variantOfType(inputs.WebSocketClientFrame, 'command');
  if (commandFrame) commandFrame.command = reference('Command');
  return inputs;
}

/** The OpenAPI 3.1 document of the daemon's API, generated from the protocol's zod schemas. */
export function buildOpenApiDocument(): JsonObject {
  const schemas = {
    ...documentLooseInputs(
      componentSchemas({ Command, SubmittedInputPart, WebSocketClientFrame: ClientFrame }, 'input'),
    ),
    ...componentSchemas(
      {
        Receipt,
        InputPart,
        ModelList,
        ProtocolEvent,
        SessionSnapshot,
        Workspace,
        WorkspaceStatus,
        ChangedFile,
        SessionDiff,
        DeletedSession,
        SerializedAgentError,
        ErrorResponse,
        SessionPage,
        ProviderList,
        Health,
        Unhealthy,
        WebSocketServerFrame: ServerFrame,
      },
      'output',
    ),
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'Tether daemon API',
      version: VERSION,
      description:
        'Commands, events and errors are those of docs/protocol.md. Every /v1 route needs Authorization: Bearer <token> (see docs/api.md).',
    },
    servers: [{ url: '/' }],
    security: [{ bearer: [] }],
    paths: {
      '/health': {
        get: {
          summary: 'Liveness and readiness (no token)',
          security: [],
          responses: {
            '200': { description: 'Running.', content: json('Health') },
            '503': { description: 'Running, but its store cannot reach its database.', content: json('Unhealthy') },
          },
        },
      },
      '/v1/commands': {
        post: {
          summary: 'Send any command',
          description:
            'A repeated commandId returns the original receipt. A body past 64 MiB (room for a turn whose images are at imageLimits.maxTotalBytes, base64) is refused with 413 payload_too_large.',
          requestBody: { required: true, content: json('Command') },
          responses: {
            '200': { description: 'The receipt.', content: json('Receipt') },
            ...authErrors,
            ...errors(400, 404, 409, 413, 422, 429, 500, 501, 502, 503, 504),
          },
        },
      },
      '/v1/sessions': {
        get: {
          summary: 'List sessions, newest first',
          parameters: [
            { name: 'state', in: 'query', schema: { type: 'string', enum: ['idle', 'running', 'waiting', 'closed'] } },
            {
              name: 'limit',
              in: 'query',
              description: 'At most this many (default 50); above 500, 500.',
              schema: { type: 'integer', minimum: 1, default: 50 },
            },
            {
              name: 'before',
              in: 'query',
              description: 'The "next" cursor of the previous page.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': { description: 'One page.', content: json('SessionPage') },
            ...authErrors,
            ...errors(400),
          },
        },
      },
      '/v1/sessions/{id}': {
        get: {
          summary: 'A session snapshot',
          parameters: [sessionIdParameter],
          responses: {
            '200': { description: 'The snapshot.', content: json('SessionSnapshot') },
            ...authErrors,
            ...errors(404),
          },
        },
        delete: {
          summary: 'Delete a closed session and everything stored about it',
          description:
            "409 session_open for an open session (close it first). A git_worktree session's kept worktree goes too when it holds no work; one with uncommitted changes or commits beyond its base is refused with 409 workspace_has_changes (its message names the worktree and branch) unless ?discardWorkspaceChanges=true, which removes the worktree and its branch. A directory workspace is never touched.",
          parameters: [
            sessionIdParameter,
            {
              name: 'discardWorkspaceChanges',
              in: 'query',
              description: "Remove the session's worktree and branch even though they hold work.",
              schema: { type: 'string', enum: ['true', 'false'], default: 'false' },
            },
          ],
          responses: {
            '200': {
              description:
                'Deleted: what became of its workspace as the delete ended (kept in_use for a session sharing it, checked_out_elsewhere for a worktree moved since).',
              content: json('DeletedSession'),
            },
            ...authErrors,
            ...errors(400, 404, 409),
          },
        },
      },
      '/v1/sessions/{id}/diff': {
        get: {
          summary: "The session's work against the commit its worktree started from",
          description:
            "For a git_worktree session: every changed file (committed on its branch or not, untracked ones included, .gitignore respected) with its line counts, and git's unified diff (binary files named, not shown), cut at maxBytes (truncated says so; the file list is always whole). 501 capability_unsupported for a directory workspace.",
          parameters: [
            sessionIdParameter,
            {
              name: 'maxBytes',
              in: 'query',
              description: 'Cut the unified diff at this many bytes.',
              schema: { type: 'integer', minimum: 1, maximum: diffLimits.maxBytes, default: diffLimits.defaultBytes },
            },
          ],
          responses: {
            '200': { description: 'The diff.', content: json('SessionDiff') },
            ...authErrors,
            ...errors(400, 404, 501),
          },
        },
      },
      '/v1/sessions/{id}/blobs/{sha256}': {
        get: {
          summary: 'An image a turn of the session carried (its bytes)',
          description:
            'run.started records an image part by reference ({mediaType, sha256, byteLength, width, height}); this answers its bytes with Content-Type the media type. Content-addressed, so cacheable for good (Cache-Control: private, max-age=31536000, immutable; ETag the quoted sha256, and 304 to an If-None-Match naming it). 404 blob_not_found unless this session carried it.',
          parameters: [sessionIdParameter, sha256Parameter],
          responses: {
            '200': {
              description: 'The bytes.',
              content: Object.fromEntries(
                ImageMediaType.options.map((mediaType) => [
                  mediaType,
                  { schema: { type: 'string', format: 'binary' } },
                ]),
              ),
            },
            '304': { description: 'Not modified: If-None-Match named this blob, which this session carries.' },
            ...authErrors,
            ...errors(400, 404),
          },
        },
      },
      '/v1/sessions/{id}/events': {
        get: {
          summary: 'Server-Sent Events: stored events after the start, then live ones',
          description:
            'Each event is "id: <seq>" and "data: <event JSON>". The start is Last-Event-ID, else ?after, else 0; an ?after given is checked either way (400 invalid_start_seq when empty or not a sequence number), and so is a Last-Event-ID that is not blank. ": ping" every 15 s. A subscriber that falls behind its buffer gets "event: overflow" with data {"lastSeq": N} and the stream closes. 429 capacity_exceeded (too_many_streams, with Retry-After) when streams and WebSockets already hold 80% of maxConnections.',
          parameters: [
            sessionIdParameter,
            { name: 'after', in: 'query', schema: { type: 'integer', minimum: 0 } },
            { name: 'Last-Event-ID', in: 'header', schema: { type: 'integer', minimum: 0 } },
          ],
          responses: {
            '200': {
              description: 'The stream; each data line is a ProtocolEvent.',
              content: {
                'text/event-stream': { schema: { type: 'string' }, 'x-event-schema': reference('ProtocolEvent') },
              },
            },
            ...authErrors,
            ...errors(400, 404, 429),
          },
        },
      },
      '/v1/providers': {
        get: {
          summary: 'Providers, their capabilities and availability',
          responses: { '200': { description: 'The providers.', content: json('ProviderList') }, ...authErrors },
        },
      },
      '/v1/providers/{name}/models': {
        get: {
          summary: "The agent's model list (kept per binary, environment and settings files)",
          description:
            'What to offer as `model` in open_session and set_model: ids (aliases or full names), display names, descriptions. 404 route_not_found for a provider that is not configured; 501 capability_unsupported when the provider has no list; 503 provider_unavailable when the agent cannot be asked; 503 runtime_stopped while the daemon shuts down.',
          parameters: [providerNameParameter],
          responses: {
            '200': { description: 'The models.', content: json('ModelList') },
            ...authErrors,
            ...errors(404, 501, 503),
          },
        },
      },
      '/v1/metrics': {
        get: {
          summary: 'Prometheus metrics (text format 0.0.4)',
          responses: {
            '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
            ...authErrors,
          },
        },
      },
      '/v1/openapi.json': {
        get: {
          summary: 'This document',
          responses: {
            '200': { description: 'OpenAPI 3.1.', content: { 'application/json': { schema: { type: 'object' } } } },
            ...authErrors,
          },
        },
      },
      '/v1/push/key': {
        get: {
          summary: "Whether Web Push is on, and the daemon's VAPID public key for the web UI's push subscription",
          description:
            '{enabled: true, publicKey}: publicKey is the uncompressed P-256 point, base64url (applicationServerKey). {enabled: false} when Web Push is off (docs/notifications.md).',
          responses: { '200': { description: 'Whether push is on, and its key when it is.' }, ...authErrors },
        },
      },
      '/v1/push/subscriptions': {
        post: {
          summary: "Registers a browser's push subscription (its PushSubscription.toJSON())",
          description:
            'It then gets the notifications as Web Push messages. 201 {id} when new, 200 when known; 400 invalid_command for an endpoint that is not https or bad keys; 429 capacity_exceeded past webPush.maxSubscriptions; 501 when Web Push is off.',
          responses: {
            '200': { description: 'Known already.' },
            '201': { description: 'Registered.' },
            ...authErrors,
            ...errors(400, 429, 501),
          },
        },
        delete: {
          summary: "Forgets a browser's push subscription ({endpoint})",
          responses: {
            '200': { description: '{removed}: whether it was registered.' },
            ...authErrors,
            ...errors(400, 501),
          },
        },
      },
      '/v1/links/{token}': {
        get: {
          summary: "A notification's one-time link: what it would answer (never answers)",
          description:
            'No bearer token: the one-time token in the path is the credential, good for one answer to one interaction (docs/notifications.md). HTML for a browser (Accept: text/html), JSON otherwise. 410 link_unavailable once used, expired, or its interaction ended.',
          security: [],
          parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'What the link answers.' }, ...errors(410) },
        },
        post: {
          summary: "Uses a notification's one-time link: answers its interaction through respond_interaction",
          description:
            "First answer wins; the interaction's other links are void from here. 410 link_unavailable for a second use; 409 when the interaction was answered another way first.",
          security: [],
          parameters: [{ name: 'token', in: 'path', required: true, schema: { type: 'string' } }],
          responses: { '200': { description: 'Answered.' }, ...errors(409, 410, 502) },
        },
      },
      '/v1/ws': {
        get: {
          summary: 'WebSocket: commands and subscriptions on one connection',
          description:
            'First frame {"type":"auth","token":"…"} within 5 s (else close 4401), then {"type":"ready"}. Client frames: WebSocketClientFrame; daemon frames: WebSocketServerFrame. Close 4408: fell behind, reconnect from your last seq; 4401: token rotated. A plain GET without an upgrade is 400 (websocket_upgrade_required).',
          security: [],
          responses: {
            '101': { description: 'Switching protocols.' },
            ...errors(400),
            '401': { description: 'A plain GET (no upgrade) without the bearer token (empty body).' },
            '403': authErrors['403'],
            '429': {
              description:
                'Event streams and WebSockets already hold 80% of maxConnections (with Retry-After); empty body.',
            },
            '503': {
              description:
                'The daemon is shutting down, or too many sockets are waiting to authenticate (then with Retry-After); empty body.',
            },
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas,
    },
  };
}
