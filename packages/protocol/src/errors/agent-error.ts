import { z } from 'zod';
import { type ErrorCode, errorCodeTable, errorCodes } from './error-codes.js';

const agentErrorMarker = Symbol.for('tether.agent-error');

/** Structured, non-secret facts about an error. Never prompt text, secrets or raw provider output. */
export const ErrorDetails = z.strictObject({
  /** The HTTP status the upstream API answered with (provider_api_error). */
  httpStatus: z.number().int().optional(),
  /** The process that owns a data directory (data_dir_in_use). */
  ownerPid: z.number().int().optional(),
  /** The daemon that drives a session, among several sharing a store (session_owned_elsewhere): its owner id and advertised URL (null if none). */
  ownerId: z.string().max(200).optional(),
  ownerUrl: z.string().max(2000).nullable().optional(),
  /** When the plan limit window that refused a turn reopens, ISO-8601 (provider_api_error, reason plan_limit). */
  resetsAt: z.string().max(40).optional(),
  /** A short machine-readable reason token. */
  reason: z.string().max(100).optional(),
  /** The agent binary involved (provider_unavailable). */
  binaryPath: z.string().max(4096).optional(),
  /** The exit code or signal of a provider process that ended. */
  exitCode: z.number().int().nullable().optional(),
  signal: z.string().max(20).nullable().optional(),
  /** The operating system's error code of a failed operation (e.g. E2BIG when the agent could not be started). */
  systemErrorCode: z.string().max(40).optional(),
  /** Where a run stalled (provider_stalled): `startup` (no first frame) or `api` (waiting on the model API). */
  phase: z.enum(['startup', 'api']).optional(),
  /** The version of an agent binary or library that was found, and the oldest one supported (provider_unavailable). */
  installedVersion: z.string().max(100).optional(),
  minimumVersion: z.string().max(100).optional(),
  /** The sessions a refused store write touched that another runtime holds now (store_failure, reason lease_lost). */
  sessionIds: z.array(z.string().max(200)).max(1000).optional(),
  /** The session a run named in another session's command belongs to (run_not_found, reason other_session). */
  sessionId: z.string().max(200).optional(),
  /** The command a client got no answer to (runtime_stopped from @tether/client): send it again with this id. */
  commandId: z.string().max(200).optional(),
  /** The zero-based position of the submit_turn input part a refusal is about (messages count from 1). */
  index: z.number().int().nonnegative().optional(),
  /** The methods a route answers, when it was asked with another (method_not_allowed; also its Allow header). */
  allowedMethods: z.array(z.string().max(20)).max(20).optional(),
  /** Where a command failed validation: paths and messages, never the offending values. */
  issues: z
    .array(z.strictObject({ path: z.string().max(500), message: z.string().max(500) }))
    .max(50)
    .optional(),
});
export type ErrorDetails = z.infer<typeof ErrorDetails>;

export const SerializedAgentError = z.strictObject({
  code: z.enum(errorCodes),
  message: z.string().max(2000),
  retryable: z.boolean(),
  details: ErrorDetails.optional(),
});
export type SerializedAgentError = z.infer<typeof SerializedAgentError>;

export interface AgentErrorOptions {
  code: ErrorCode;
  message: string;
  details?: ErrorDetails;
  retryable?: boolean;
  cause?: unknown;
}

/**
 * The one error type Tether reports. Its `code` is stable; its `message` says what to do.
 * `isInstance` works across duplicated package copies (a Symbol.for marker, not instanceof).
 */
export class AgentError extends Error {
  readonly [agentErrorMarker] = true;
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  readonly retryable: boolean;

  constructor(options: AgentErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentError';
    this.code = options.code;
    this.details = options.details;
    this.retryable = options.retryable ?? errorCodeTable[options.code].retryable;
  }

  static isInstance(value: unknown): value is AgentError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[agentErrorMarker] === true;
  }

  static fromObject(serialized: SerializedAgentError): AgentError {
    return new AgentError(serialized);
  }

  toObject(): SerializedAgentError {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.details && Object.keys(this.details).length > 0 ? { details: this.details } : {}),
    };
  }

  override toString(): string {
    return `${this.code}: ${this.message}`;
  }
}

/** Any thrown value as an AgentError; unknown failures become internal_error without their text. */
export function toAgentError(error: unknown): AgentError {
  if (AgentError.isInstance(error)) return error;
  return new AgentError({
    code: 'internal_error',
    message: 'Tether hit an unexpected internal error. Retry; if it persists, report it with the steps that led to it.',
    cause: error,
  });
}
