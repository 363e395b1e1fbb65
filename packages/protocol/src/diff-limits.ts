/**
 * How much unified diff one `getSessionDiff` answer (`GET /v1/sessions/:id/diff`) may carry: the
 * file list is always whole, the text is cut at `maxBytes`. One cap for the runtime and the daemon,
 * so an answer is the same whichever a host asks.
 */
export const diffLimits = {
  /** The cut when a host names none. */
  defaultBytes: 1024 * 1024,
  /** The largest `maxBytes` a host may ask for: a bigger answer is a JSON body few hosts want to hold. */
  maxBytes: 16 * 1024 * 1024,
} as const;
