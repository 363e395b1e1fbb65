import type { HttpBindings } from '@hono/node-server';

/** Facts a handler leaves for the request log (never bodies, tokens or prompt text). */
export interface RequestVariables {
  sessionId: string;
  errorCode: string;
  commandType: string;
}

export interface DaemonEnvironment {
  Bindings: HttpBindings;
  Variables: Partial<RequestVariables>;
}
