/**
 * The prompts the scenarios send. bench/fake-api-server.mjs picks its reply by the `[bench:…]`
 * marker, so a prompt here and the reply scripted there must change together.
 */
export const SHORT = 'Reply briefly. [bench:short]';
export const SLOW = 'Reply at length. [bench:slow]';

/** A reply of exactly `deltas` text deltas, `delayMs` apart (0: as fast as the fake API writes). */
export const turnPrompt = (deltas, delayMs = 0) =>
  `Reply with the scripted text. [bench:deltas=${deltas}${delayMs > 0 ? `,delay=${delayMs}` : ''}]`;
