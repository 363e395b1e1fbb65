import { z } from 'zod';
import { RunId } from './identifiers.js';
import { randomHex32 } from './random-hex.js';

/** A follow-up sent while a run was active (submit_turn with a delivery): its id until it ends. */
export const InputId = z
  .string()
  .regex(/^inp_[0-9a-f]{32}$/, 'a Tether input id looks like inp_ followed by 32 hex digits');
export type InputId = z.infer<typeof InputId>;

export function newInputId(): InputId {
  return `inp_${randomHex32()}`;
}

/**
 * How a turn submitted while a run is active reaches the agent. after_turn: queued, and started as
 * its own run once the active run ends (ended runs of any outcome; an interrupt with cancelQueued
 * cancels it instead). steer: handed to the agent now, to take into the running turn at its next
 * opportunity (next to a tool's result, or right after the text it is writing); it belongs to the
 * running run, so an interrupt of that run cancels it if it has not reached the model yet.
 */
export const InputDelivery = z.enum(['after_turn', 'steer']);
export type InputDelivery = z.infer<typeof InputDelivery>;

/**
 * Why a queued input ended without running: withdrawn (cancel_queued_input), interrupted (the run
 * it waited for or steered was interrupted, with cancelQueued for after_turn), session_closed,
 * runtime_restarted (a queue does not outlive the process that held it: nothing queued starts by
 * itself after a restart), agent_refused (the agent would not take it; the error says why),
 * input_invalid (an after_turn input about to start no longer passes the check it passed at submit:
 * a file it refers to is gone, left the workspace or changed kind; the error says which and what to do).
 */
export const InputCancelReason = z.enum([
  'withdrawn',
  'interrupted',
  'session_closed',
  'runtime_restarted',
  'agent_refused',
  'input_invalid',
]);
export type InputCancelReason = z.infer<typeof InputCancelReason>;

/**
 * Why a queued after_turn input waits although no run is active. plan_limit: the account's plan limit
 * window was last reported rejected with a reset time still ahead (session.limits_changed), so starting
 * it would only get the API's refusal; it starts, oldest first, at that reset or at once when a later
 * report no longer rejects.
 */
export const InputHoldReason = z.enum(['plan_limit']);
export type InputHoldReason = z.infer<typeof InputHoldReason>;

/** A queued input's hold (input.held): until when (ISO-8601) and why. */
export const InputHold = z.strictObject({
  until: z.string().max(40),
  reason: InputHoldReason,
});
export type InputHold = z.infer<typeof InputHold>;

/** A follow-up not yet started or folded in, as the session snapshot lists it (oldest first). */
export const QueuedInput = z.strictObject({
  inputId: InputId,
  delivery: InputDelivery,
  /** after_turn: the run it will start as (its receipt's runId); steer: the running run it was sent into. */
  runId: RunId,
  queuedAt: z.string().max(40),
  /** The input's text, whitespace collapsed and cut at 200 characters; null when redacted. */
  preview: z.string().max(200).nullable(),
  /** after_turn only: set while it is held (input.held) although no run is active; absent once a run starts. */
  held: InputHold.optional(),
});
export type QueuedInput = z.infer<typeof QueuedInput>;
