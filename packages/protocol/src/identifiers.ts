import { z } from 'zod';
import { randomHex32 as randomHex } from './random-hex.js';

const tokenPattern = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

/** A caller-made command id; a repeated id returns the original receipt. */
export const CommandId = z.string().min(1).max(200).regex(tokenPattern, 'use letters, digits, "_", ".", ":" or "-"');
export type CommandId = z.infer<typeof CommandId>;

export const SessionId = z
  .string()
  .regex(/^ses_[a-z0-9]{32}$/, 'a Tether session id looks like ses_ followed by 32 hex digits');
export type SessionId = z.infer<typeof SessionId>;

export const RunId = z
  .string()
  .regex(/^run_[a-z0-9]{32}$/, 'a Tether run id looks like run_ followed by 32 hex digits');
export type RunId = z.infer<typeof RunId>;

export function newSessionId(): SessionId {
  return `ses_${randomHex()}`;
}

export function newRunId(): RunId {
  return `run_${randomHex()}`;
}

export function newCommandId(): CommandId {
  return `cmd_${randomHex()}`;
}
