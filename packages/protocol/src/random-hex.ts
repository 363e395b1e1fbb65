/** Random bytes drawn from the generator at once: 256 ids a call. */
const poolBytes = 4096;
const idBytes = 16;

/** Every byte's two hex digits. */
const hexOfByte = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

let pool = new Uint8Array(0);
let used = 0;

/**
 * 32 random hex digits (128 bits). getRandomValues rather than randomUUID: browsers offer
 * randomUUID only in secure contexts, and the web UI may be opened over plain http on a LAN
 * address (`tether serve --host`); getRandomValues is there in every context and in Node.
 * The bytes are drawn in blocks, as Node's randomUUID does: one call through Web Crypto's
 * argument checks cost ~0.06 ms in a host that idled between turns, and a turn takes two ids.
 */
export function randomHex32(): string {
  if (used + idBytes > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(poolBytes));
    used = 0;
  }
  let hex = '';
  for (let index = used; index < used + idBytes; index += 1) hex += hexOfByte[pool[index]!];
  used += idBytes;
  return hex;
}
