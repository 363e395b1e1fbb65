import { createHmac } from 'node:crypto';

export const signatureHeader = 'X-Tether-Signature';
export const timestampHeader = 'X-Tether-Timestamp';

/**
 * `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`: the timestamp is signed with the body, so a
 * receiver that rejects old timestamps cannot be fed a recorded notification again.
 */
export function signNotification(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
