/**
 * Headers on every answer of the daemon. The UI is served from the same origin as the API, so
 * everything it needs is 'self': no inline script or style (CSP without 'unsafe-inline'), nothing
 * from elsewhere, no framing (clickjacking an approval button), no referrer leaking a session URL.
 */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // blob: for the images a turn carried, shown from object URLs of their bytes (fetched with the token).
  "img-src 'self' blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const securityHeaders: Readonly<Record<string, string>> = {
  'Content-Security-Policy': contentSecurityPolicy,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
