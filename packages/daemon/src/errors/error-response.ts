import {
  AgentError,
  type ErrorCode,
  type SerializedAgentError,
  httpStatusForCode,
  toAgentError,
} from '@tether/protocol';

/** The one error body of the API: `{"error": SerializedAgentError}`. */
export interface ErrorBody {
  readonly error: SerializedAgentError;
}

/** Any thrown value as the API's error body and HTTP status (from the protocol's one table). */
export function describeError(error: unknown): { status: number; body: ErrorBody; code: ErrorCode } {
  const agentError = toAgentError(error);
  return { status: httpStatusForCode(agentError.code), body: { error: agentError.toObject() }, code: agentError.code };
}

export function invalidRequest(message: string, reason: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}

export function routeNotFound(method: string): AgentError {
  return new AgentError({
    code: 'route_not_found',
    message: `No ${method} route here. The API lives under /v1 (see GET /v1/openapi.json).`,
  });
}

/** A route that exists, asked with another method: `allowed` are the ones it answers (also the Allow header). */
export function methodNotAllowed(method: string, allowed: readonly string[]): AgentError {
  return new AgentError({
    code: 'method_not_allowed',
    message: `This route does not answer ${method}; it answers ${allowed.join(', ')} (see GET /v1/openapi.json).`,
    details: { allowedMethods: [...allowed] },
  });
}

/** Seconds a client refused for too many streams waits before it asks again. */
export const streamsFullRetrySeconds = 5;

export function streamsFull(limit: number): AgentError {
  return new AgentError({
    code: 'capacity_exceeded',
    message: `This daemon already holds ${limit} event streams and WebSockets, as many as it keeps open so that commands and /health still get through. End the subscriptions nobody reads, follow many sessions over one WebSocket (/v1/ws), or start the daemon with a higher maxConnections (streams may take 80% of it).`,
    details: { reason: 'too_many_streams' },
  });
}

export function daemonStopping(): AgentError {
  return new AgentError({
    code: 'runtime_stopped',
    message: 'The daemon is shutting down and starts no new work. Retry once it is running again.',
  });
}
