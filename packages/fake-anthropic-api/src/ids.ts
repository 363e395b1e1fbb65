import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A random id like the API's: `prefix` + 24 base62 characters. */
export function randomId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return out;
}

export const newMessageId = (): string => randomId('msg_01');
export const newToolUseId = (): string => randomId('toolu_01');
export const newRequestId = (): string => randomId('req_01');

/** A plausible (but fake) thinking signature. */
export const newSignature = (): string => randomBytes(48).toString('base64');
