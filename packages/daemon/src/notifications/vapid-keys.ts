import { type KeyObject, createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import path from 'node:path';
import { ensureDataDirectory, readPrivateDataFile } from '@tether/store-sqlite';
import { z } from 'zod';
import { writePrivateFile } from '../auth/private-files.js';

export const vapidKeyFileName = 'web-push-vapid-key.json';

const untrustedKeyRemedy =
  'Delete it: the daemon then writes a new private one (every browser must enable notifications again, since subscriptions are bound to the key).';

const StoredKey = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  y: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
  d: z.string().regex(/^[A-Za-z0-9_-]{43}$/),
});

/** The daemon's application server key pair (RFC 8292): browsers bind their subscriptions to its public key. */
export interface VapidKeys {
  /** The uncompressed P-256 point, base64url: what the web UI passes to pushManager.subscribe. */
  readonly publicKey: string;
  readonly privateKey: KeyObject;
  readonly filePath: string;
}

function keysOf(jwk: z.infer<typeof StoredKey>, filePath: string): VapidKeys {
  const publicKey = Buffer.concat([
    Buffer.from([4]),
    Buffer.from(jwk.x, 'base64url'),
    Buffer.from(jwk.y, 'base64url'),
  ]).toString('base64url');
  return { publicKey, privateKey: createPrivateKey({ key: jwk, format: 'jwk' }), filePath };
}

function parseStoredKey(text: string): z.infer<typeof StoredKey> | null {
  try {
    const parsed = StoredKey.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The VAPID key pair of the data dir: read when the file is ours alone, else generated once (P-256)
 * and written 0600. A file that is not ours alone fails the start (data_dir_unsafe) rather than
 * being replaced: the browsers' subscriptions are bound to this key. An unreadable one is replaced.
 */
export async function ensureVapidKeys(dataDir: string): Promise<VapidKeys> {
  const filePath = path.join(path.resolve(dataDir), vapidKeyFileName);
  const existing = readPrivateDataFile(filePath, untrustedKeyRemedy);
  const stored = existing === null ? null : parseStoredKey(existing);
  if (stored !== null) return keysOf(stored, filePath);
  ensureDataDirectory(path.resolve(dataDir));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = StoredKey.parse(privateKey.export({ format: 'jwk' }));
  await writePrivateFile(filePath, `${JSON.stringify(jwk)}\n`);
  return keysOf(jwk, filePath);
}

/** How long a VAPID token is good for: RFC 8292 §2 allows at most 24 hours; less leaves room for clock skew. */
const tokenLifetimeSeconds = 12 * 3600;

const encodeSegment = (value: object) => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/**
 * The Authorization header of one push request (RFC 8292 §3): `vapid t=<JWT>, k=<public key>`, the
 * JWT signed ES256 for the endpoint's origin, expiring within a day, naming who to contact.
 */
export function vapidAuthorization(keys: VapidKeys, endpoint: URL, subject: string, nowMs = Date.now()): string {
  const claims = { aud: endpoint.origin, exp: Math.floor(nowMs / 1000) + tokenLifetimeSeconds, sub: subject };
  const signingInput = `${encodeSegment({ typ: 'JWT', alg: 'ES256' })}.${encodeSegment(claims)}`;
  // JWS wants ECDSA's raw r || s (RFC 7518 §3.4), not DER.
  const signature = sign('sha256', Buffer.from(signingInput), { key: keys.privateKey, dsaEncoding: 'ieee-p1363' });
  return `vapid t=${signingInput}.${signature.toString('base64url')}, k=${keys.publicKey}`;
}
