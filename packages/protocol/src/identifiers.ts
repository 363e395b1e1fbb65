import { z } from 'zod';
import { randomHex32 as randomHex } from './random-hex.js';

/** What ids look like; the schemas below and the commands' fast path (parse-command-fast-path.ts) share them. */
export const identifierPatterns = {
  command: /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/,
  session: /^ses_[0-9a-f]{32}$/,
  run: /^run_[0-9a-f]{32}$/,
} as const;
export const commandIdLengthLimit = 200;

/** A caller-made command id; a repeated id returns the original receipt. */
export const CommandId = z
  .string()
  .min(1)
  .max(commandIdLengthLimit)
  .regex(identifierPatterns.command, 'use letters, digits, "_", ".", ":" or "-"');
export type CommandId = z.infer<typeof CommandId>;

export const SessionId = z
  .string()
  .regex(identifierPatterns.session, 'a Tether session id looks like ses_ followed by 32 hex digits');
export type SessionId = z.infer<typeof SessionId>;

export const RunId = z
  .string()
  .regex(identifierPatterns.run, 'a Tether run id looks like run_ followed by 32 hex digits');
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
