import { AgentError, SerializedAgentError } from '@tether/protocol';

/** What a failed zod parse says, kept to where and why (never the values the daemon sent). */
export interface ValidationIssues {
  readonly issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[];
}

function describeIssues(validation: ValidationIssues | undefined) {
  return (validation?.issues ?? []).slice(0, 50).map((issue) => ({
    path: (issue.path.map(String).join('.') || '(root)').slice(0, 500),
    message: issue.message.slice(0, 500),
  }));
}

/** The daemon could not be reached at all (refused, reset, DNS, a browser's CORS failure). */
export function unreachableError(url: string, cause: unknown): AgentError {
  return new AgentError({
    code: 'runtime_stopped',
    message: `The Tether daemon at ${url} is not reachable; is \`tether serve\` running?`,
    retryable: true,
    cause,
  });
}

/** The event stream kept ending or skipping events and the client ran out of reconnection attempts. */
export function streamLostError(url: string, attempts: number): AgentError {
  return new AgentError({
    code: 'runtime_stopped',
    message: `The event stream from the Tether daemon at ${url} kept breaking off and ${attempts} reconnection attempts in a row did not restore it; is \`tether serve\` running?`,
    retryable: true,
  });
}

function unauthorizedError(url: string): AgentError {
  return new AgentError({
    code: 'unauthorized',
    message: `The Tether daemon at ${url} refused the token; check it with \`tether token\` (\`tether token --rotate\` replaces it, and the old one stops working).`,
  });
}

/** 403 with an empty body is the daemon's Host/Origin check (its DNS-rebinding defence). */
function originRefusedError(url: string): AgentError {
  return new AgentError({
    code: 'unauthorized',
    message: `The Tether daemon at ${url} refused this request's Host or Origin; connect through a loopback address, or start it with \`--allow-origin <your app's origin>\`.`,
    details: { httpStatus: 403, reason: 'origin_refused' },
  });
}

/** The daemon answered something this client cannot read: a version mismatch or something else on the port. */
export function invalidResponseError(url: string, what: string, validation?: ValidationIssues): AgentError {
  const issues = describeIssues(validation);
  return new AgentError({
    code: 'internal_error',
    message: `The Tether daemon at ${url} sent ${what} that this client does not understand; make sure the client and the daemon are the same version.`,
    details: { reason: 'invalid_response', ...(issues.length > 0 ? { issues } : {}) },
  });
}

/**
 * The AgentError a non-2xx answer stands for: the daemon's own `{"error": …}` when the body holds
 * one, else one made from the status (a proxy's page, an empty body).
 */
export async function errorFromResponse(response: Response, url: string): Promise<AgentError> {
  if (response.status === 401) return unauthorizedError(url);
  let text = '';
  try {
    text = await response.text();
  } catch {
    // The body broke off; the status alone still says what happened.
  }
  if (response.status === 403 && text === '') return originRefusedError(url);
  const serialized = SerializedAgentError.safeParse(parseJson(text)?.error);
  if (serialized.success) return AgentError.fromObject(serialized.data);
  return new AgentError({
    code: 'internal_error',
    message: `The Tether daemon at ${url} answered HTTP ${response.status} without a Tether error; make sure the URL points at \`tether serve\`.`,
    retryable: response.status >= 500 || response.status === 429,
    details: { httpStatus: response.status, reason: 'unexpected_status' },
  });
}

function parseJson(text: string): { error?: unknown } | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as { error?: unknown }) : undefined;
  } catch {
    return undefined;
  }
}
