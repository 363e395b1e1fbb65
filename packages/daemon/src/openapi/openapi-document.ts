import { Command, ProtocolEvent, Receipt, SerializedAgentError, SessionSnapshot } from '@tether/protocol';
import { z } from 'zod';
import { VERSION } from '../version.js';
import { ClientFrame, ServerFrame } from '../websocket/websocket-frames.js';
import { ErrorResponse, Health, ProviderList, SessionPage } from './api-schemas.js';

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
  schema: { type: 'string', pattern: '^ses_[a-z0-9]{32}$' },
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

/** The OpenAPI 3.1 document of the daemon's API, generated from the protocol's zod schemas. */
export function buildOpenApiDocument(): JsonObject {
  const schemas = {
    ...componentSchemas({ Command, WebSocketClientFrame: ClientFrame }, 'input'),
    ...componentSchemas(
      {
        Receipt,
        ProtocolEvent,
        SessionSnapshot,
        SerializedAgentError,
        ErrorResponse,
        SessionPage,
        ProviderList,
        Health,
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
          summary: 'Liveness (no token)',
          security: [],
          responses: { '200': { description: 'Running.', content: json('Health') } },
        },
      },
      '/v1/commands': {
        post: {
          summary: 'Send any command',
          description: 'A repeated commandId returns the original receipt.',
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
            { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 500, default: 50 } },
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
          parameters: [sessionIdParameter],
          responses: { '204': { description: 'Deleted.' }, ...authErrors, ...errors(404, 409) },
        },
      },
      '/v1/sessions/{id}/events': {
        get: {
          summary: 'Server-Sent Events: stored events after the start, then live ones',
          description:
            'Each event is "id: <seq>" and "data: <event JSON>". The start is Last-Event-ID, else ?after, else 0. ": ping" every 15 s. A subscriber that falls behind its buffer gets "event: overflow" with data {"lastSeq": N} and the stream closes.',
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
            ...errors(400, 404),
          },
        },
      },
      '/v1/providers': {
        get: {
          summary: 'Providers, their capabilities and availability',
          responses: { '200': { description: 'The providers.', content: json('ProviderList') }, ...authErrors },
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
      '/v1/ws': {
        get: {
          summary: 'WebSocket: commands and subscriptions on one connection',
          description:
            'First frame {"type":"auth","token":"…"} within 5 s (else close 4401), then {"type":"ready"}. Client frames: WebSocketClientFrame; daemon frames: WebSocketServerFrame. Close 4408: fell behind, reconnect from your last seq; 4401: token rotated.',
          security: [],
          responses: { '101': { description: 'Switching protocols.' }, '403': authErrors['403'] },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas,
    },
  };
}
