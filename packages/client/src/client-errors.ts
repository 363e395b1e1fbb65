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

/**
 * The daemon could not be reached (refused, DNS, a browser's CORS failure). With `maybeSent`, a
 * command that may have gone out all the same (a browser's fetch says nothing of why it failed): the
 * message says how to send it again safely.
 */
export function unreachableError(url: string, cause: unknown, maybeSent?: RequestSubject['command']): AgentError {
  const retry =
    maybeSent === undefined
      ? ''
      : ` If the ${maybeSent.type} command went out before the connection broke, it may have been applied: sending it again with the same commandId (${maybeSent.commandId}) is safe.`;
  return noAnswer(`The Tether daemon at ${url} is not reachable; is \`tether serve\` running?${retry}`, {
    command: maybeSent,
    cause,
  });
}

/**
 * Every way the client got no answer: runtime_stopped, retryable (to the caller the daemon did not
 * answer, whatever the way), `details.reason` telling the ways apart, and a command's id to send it
 * again with, so a retry in code reuses it without reading the message.
 */
function noAnswer(
  message: string,
  options: { reason?: string; command?: RequestSubject['command']; cause?: unknown },
): AgentError {
  const details = {
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    ...(options.command === undefined ? {} : { commandId: options.command.commandId }),
  };
  return new AgentError({
    code: 'runtime_stopped',
    message,
    retryable: true,
    ...(Object.keys(details).length > 0 ? { details } : {}),
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/** A request the client sent: what its message names, and what a retry does. */
export interface RequestSubject {
  /** e.g. "GET /v1/sessions/ses_…" (never a query string). */
  readonly description: string;
  /** A command: it may have been applied without its answer reaching us; its id makes a retry safe. */
  readonly command?: { readonly type: string; readonly commandId: string };
  /** The client option that sets this request's time limit. */
  readonly limitOption: 'requestTimeoutMs' | 'commandTimeoutMs';
}

function describeDuration(milliseconds: number): string {
  return milliseconds < 1000 ? `${milliseconds} ms` : `${Number((milliseconds / 1000).toFixed(1))} s`;
}

/**
 * The connection broke after the request was sent and before its whole answer came: a command may
 * have been applied (the daemon was there), so it is not "not reachable", which invites a retry
 * under a new commandId that would apply it twice.
 */
export function answerLostError(url: string, subject: RequestSubject, cause: unknown): AgentError {
  const message =
    subject.command === undefined
      ? `The connection to the Tether daemon at ${url} broke before its answer to ${subject.description} came; send it again.`
      : `The connection to the Tether daemon at ${url} broke before its answer to the ${subject.command.type} command came, ${commandOutcome(subject.command)}`;
  return noAnswer(message, { reason: 'answer_lost', command: subject.command, cause });
}

/** A request whose signal had aborted before it was sent: nothing reached the daemon. */
export function requestNotSentError(url: string, subject: RequestSubject, cause: unknown): AgentError {
  const what =
    subject.command === undefined ? `The request ${subject.description}` : `The ${subject.command.type} command`;
  return noAnswer(
    `${what} was not sent to the Tether daemon at ${url}: its signal had aborted already. Nothing was applied.`,
    { reason: 'request_aborted', cause },
  );
}

/** A command got no answer: whether it was applied is unknown, and its commandId is what makes asking again safe. */
function commandOutcome(command: NonNullable<RequestSubject['command']>): string {
  return `so it may or may not have been applied. Sending it again with the same commandId (${command.commandId}) is safe: the daemon applies a commandId once and answers a repeat with the original receipt.`;
}

/**
 * No answer within the time limit. runtime_stopped, as for a daemon that cannot be reached: to the
 * caller both are a daemon that did not answer, retryable; `details.reason` tells them apart.
 */
export function requestTimeoutError(url: string, subject: RequestSubject, timeoutMs: number): AgentError {
  const limit = describeDuration(timeoutMs);
  const raise = `raise ${subject.limitOption} (or this call's timeoutMs) if the daemon is only slow`;
  const message =
    subject.command === undefined
      ? `The Tether daemon at ${url} did not answer ${subject.description} within ${limit}; it may be hung or overloaded. Check that \`tether serve\` answers (GET /health) and retry, or ${raise}.`
      : `The Tether daemon at ${url} did not answer the ${subject.command.type} command within ${limit}, ${commandOutcome(subject.command)} Check that \`tether serve\` answers (GET /health), or ${raise}.`;
  return noAnswer(message, { reason: 'request_timeout', command: subject.command });
}

/** The caller's signal aborted the request before the answer came (same code as a timeout: no answer). */
export function requestAbortedError(url: string, subject: RequestSubject, cause: unknown): AgentError {
  const message =
    subject.command === undefined
      ? `The request ${subject.description} to the Tether daemon at ${url} was aborted by its signal before the daemon answered; send it again if you still need the answer.`
      : `The ${subject.command.type} command to the Tether daemon at ${url} was aborted by its signal before the daemon answered, ${commandOutcome(subject.command)}`;
  return noAnswer(message, { reason: 'request_aborted', command: subject.command, cause });
}

/** An event stream (or its answer) that sent nothing, not even the daemon's pings, for the silence limit. */
export function silentStreamError(url: string, silenceLimitMs: number): AgentError {
  return noAnswer(
    `The Tether daemon at ${url} sent nothing on the event stream, not even a ping, for ${describeDuration(silenceLimitMs)}; it may be hung. Check that \`tether serve\` answers (GET /health); if it pings less often (pingIntervalMs), raise reconnect.silenceLimitMs.`,
    { reason: 'stream_silent' },
  );
}

/** An event stream the daemon had opened broke off (a reset, the daemon gone mid-stream): the subscription reconnects. */
export function streamBrokenError(url: string, cause: unknown): AgentError {
  return noAnswer(
    `The event stream from the Tether daemon at ${url} broke off after it had opened; is \`tether serve\` still running?`,
    { reason: 'stream_broken', cause },
  );
}

/** The event stream kept ending or skipping events and the client ran out of reconnection attempts. */
export function streamLostError(url: string, attempts: number): AgentError {
  return noAnswer(
    `The event stream from the Tether daemon at ${url} kept breaking off and ${attempts} reconnection attempts in a row did not restore it; is \`tether serve\` running?`,
    {},
  );
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
    message: `The Tether daemon at ${url} refused this request's Host or Origin. Connect to the address \`tether serve\` prints; through a proxy or a port forward, start it with \`--advertise-url ${url}\` (the address you connect to); from a web page of another origin, with \`--allow-origin <that origin>\`.`,
    details: { httpStatus: 403, reason: 'origin_refused' },
  });
}

/** The daemon answered something this client cannot read: a version mismatch or something else on the port. */
export function invalidResponseError(url: string, what: string, validation?: ValidationIssues): AgentError {
  const issues = describeIssues(validation);
  return new AgentError({
    code: 'internal_error',
    message: `What answered at ${url} sent ${what}, which this client cannot read: make sure the URL is the one \`tether serve\` prints, and that the client and the daemon are the same version.`,
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

/** Why the daemon ended an event stream (the data of its `event: error` frame); unsaid, internal_error. */
export function streamEndedError(data: string): AgentError {
  const serialized = SerializedAgentError.safeParse(parseJson(data)?.error);
  if (serialized.success) return AgentError.fromObject(serialized.data);
  return new AgentError({
    code: 'internal_error',
    message: 'The Tether daemon ended the event stream with an error it did not describe; the subscription reconnects.',
    retryable: true,
    details: { reason: 'stream_error' },
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
