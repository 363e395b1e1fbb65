import { type OriginPolicy, judgeOrigin } from '../auth/origin-check.js';
import { securityHeaders } from '../static/security-headers.js';

/**
 * CORS for an origin the user allowed (allowOrigins, `--allow-origin`); for any other origin, or none,
 * only that the answer varies with it when some origin is allowed: a cache must not hand an answer
 * without CORS to a page on an allowed origin, or one with CORS to another.
 */
export function corsHeaders(origin: string | undefined, policy: OriginPolicy): Record<string, string> {
  if (origin !== undefined && judgeOrigin(origin, policy) === 'allowed')
    return {
      'Access-Control-Allow-Origin': origin,
      // So that a page on that origin can read when to come back (429, 503) and what a route allows (405).
      'Access-Control-Expose-Headers': 'Retry-After, Allow',
      Vary: 'Origin',
    };
  return policy.allowOrigins.size > 0 ? { Vary: 'Origin' } : {};
}

/**
 * The headers of an answer written straight to the Node response or socket (an event stream, a
 * refused upgrade), which the Hono middleware never sees: the same security headers as every other
 * answer, and CORS for an allowed origin.
 */
export function directAnswerHeaders(origin: string | undefined, policy: OriginPolicy): Record<string, string> {
  return { ...securityHeaders, ...corsHeaders(origin, policy) };
}
