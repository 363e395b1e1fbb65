import { type OriginPolicy, judgeOrigin } from '../auth/origin-check.js';
import { securityHeaders } from '../static/security-headers.js';

/** CORS for an origin the user allowed (allowOrigins, `--allow-origin`); nothing for any other origin. */
export function corsHeaders(origin: string | undefined, policy: OriginPolicy): Record<string, string> {
  return origin !== undefined && judgeOrigin(origin, policy) === 'allowed'
    ? { 'Access-Control-Allow-Origin': origin, Vary: 'Origin' }
    : {};
}

/**
 * The headers of an answer written straight to the Node response or socket (an event stream, a
 * refused upgrade), which the Hono middleware never sees: the same security headers as every other
 * answer, and CORS for an allowed origin.
 */
export function directAnswerHeaders(origin: string | undefined, policy: OriginPolicy): Record<string, string> {
  return { ...securityHeaders, ...corsHeaders(origin, policy) };
}
