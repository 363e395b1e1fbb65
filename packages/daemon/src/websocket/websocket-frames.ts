import {
  AgentError,
  ProtocolEvent,
  Receipt,
  SerializedAgentError,
  SessionId,
  checkSessionIdArgument,
  checkSubscriptionStart,
  describeIssues,
} from '@tether/protocol';
import { z } from 'zod';
import { invalidRequest } from '../errors/error-response.js';

/** A caller-chosen request id, echoed in the answer. */
export const FrameId = z.string().min(1).max(200);

export const AuthFrame = z.strictObject({ type: z.literal('auth'), token: z.string().min(1).max(1000) });

/**
 * The largest frame a socket may send before it is authenticated: an auth frame with the longest
 * token fits with room to spare. Anyone who can reach the port can open a socket, so until the token
 * is shown a frame must not make the daemon buffer more than this.
 */
export const unauthenticatedFrameMaxBytes = 4 * 1024;

export const ClientFrame = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('subscribe'),
    id: FrameId,
    sessionId: SessionId,
    afterSeq: z.number().int().nonnegative().optional(),
  }),
  z.strictObject({ type: z.literal('unsubscribe'), id: FrameId, sessionId: SessionId }),
  // The command itself is validated by the runtime, exactly as POST /v1/commands does.
  z.strictObject({
    type: z.literal('command'),
    id: FrameId,
    command: z.custom<unknown>(
      (value) => value !== undefined,
      'the command object ({type, commandId, …}), as POST /v1/commands takes it',
    ),
  }),
]);
export type ClientFrame = z.infer<typeof ClientFrame>;

/** Every frame the daemon sends, for the OpenAPI document (the socket code builds them directly). */
export const ServerFrame = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ready') }),
  z.strictObject({ type: z.literal('subscribed'), id: FrameId, sessionId: SessionId }),
  z.strictObject({
    type: z.literal('unsubscribed'),
    id: FrameId.nullable(),
    sessionId: SessionId,
    /** Why the daemon ended the subscription itself when it was not the session's deletion (a store failure). */
    error: SerializedAgentError.optional(),
  }),
  z.strictObject({ type: z.literal('event'), sessionId: SessionId, event: ProtocolEvent }),
  z.strictObject({ type: z.literal('receipt'), id: FrameId, receipt: Receipt }),
  z.strictObject({ type: z.literal('error'), id: FrameId.nullable(), error: SerializedAgentError }),
]);

/** Close codes of /v1/ws beyond the standard ones. */
export const closeCodes = {
  /** No valid auth frame in time, a wrong token, or the token was rotated. */
  unauthorized: 4401,
  /** The connection fell behind past its buffer bound: reconnect from your last seq. */
  tooSlow: 4408,
  /** The daemon is shutting down. */
  goingAway: 1001,
  /** A frame past the limit: unauthenticatedFrameMaxBytes before auth, the command limit after (ws sends it). */
  tooLarge: 1009,
} as const;

const frameTypes: readonly string[] = ClientFrame.options.map((option) => option.shape.type.value);

/** A frame of a known type names the fields it got wrong (never their values), as a command's refusal does. */
export function malformedFrame(value: unknown, issues: readonly z.core.$ZodIssue[]): SerializedAgentError {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  const guide = 'Send subscribe, unsubscribe or command frames (see /v1/openapi.json).';
  if (type === 'auth')
    return invalidRequest(
      `This socket is already authenticated: the auth frame is sent once, first. ${guide}`,
      'invalid_frame',
    ).toObject();
  if (typeof type !== 'string' || !frameTypes.includes(type))
    return invalidRequest(`Unknown or malformed frame. ${guide}`, 'invalid_frame').toObject();
  const described = describeIssues(issues, '(frame)');
  const summary = described
    .slice(0, 3)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join('; ');
  return new AgentError({
    code: 'invalid_command',
    message: `The ${type} frame is not valid (${summary}). Fix those fields. ${guide}`,
    details: { reason: 'invalid_frame', issues: described },
  }).toObject();
}

/** A subscribe frame as the socket applies it. */
export interface SubscribeRequest {
  readonly id: string;
  readonly sessionId: string;
  readonly afterSeq: number;
}

/**
 * A subscribe frame wrong only in where it reads (its session id, its afterSeq) is a read like any
 * other: refused with the reason an event stream or readEvents gives (invalid_start_seq,
 * invalid_session_id), or, for an id that names no session, subscribed to and answered
 * session_not_found. Null for any other malformed frame.
 */
export function subscribeWrongOnlyInPosition(
  value: unknown,
  issues: readonly z.core.$ZodIssue[],
): { readonly request: SubscribeRequest } | { readonly refusal: SerializedAgentError } | null {
  if (typeof value !== 'object' || value === null) return null;
  const frame = value as { type?: unknown; id?: unknown; sessionId?: unknown; afterSeq?: unknown };
  const onlyWhereItReads = issues.every((issue) => issue.path[0] === 'sessionId' || issue.path[0] === 'afterSeq');
  if (frame.type !== 'subscribe' || !onlyWhereItReads || !FrameId.safeParse(frame.id).success) return null;
  try {
    const sessionId = checkSessionIdArgument(frame.sessionId);
    const afterSeq = checkSubscriptionStart(frame.afterSeq);
    return { request: { id: frame.id as string, sessionId, afterSeq } };
  } catch (error) {
    if (AgentError.isInstance(error)) return { refusal: error.toObject() };
    throw error;
  }
}
