/**
 * 32 random hex digits (128 bits). getRandomValues rather than randomUUID: browsers offer
 * randomUUID only in secure contexts, and the web UI may be opened over plain http on a LAN
 * address (`tether serve --host`); getRandomValues is there in every context and in Node.
 */
export function randomHex32(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  let hex = '';
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0');
  return hex;
}
