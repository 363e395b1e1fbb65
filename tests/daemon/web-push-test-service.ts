import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify } from 'node:crypto';
import { type IncomingMessage, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Arrivals } from './notifications-test-receiver.js';

/** A browser's side of a subscription: the P-256 key pair and auth secret pushManager.subscribe() makes. */
export class TestBrowserKeys {
  private readonly ecdh = createECDH('prime256v1');
  readonly auth = randomBytes(16);

  constructor() {
    this.ecdh.generateKeys();
  }

  /** What PushSubscription.toJSON() gives for an endpoint. */
  subscription(endpoint: string) {
    return {
      endpoint,
      expirationTime: null,
      keys: { p256dh: this.publicKey.toString('base64url'), auth: this.auth.toString('base64url') },
    };
  }

  get publicKey(): Buffer {
    return this.ecdh.getPublicKey();
  }

  /**
   * The user agent's decryption (RFC 8291 §3.4 with RFC 8188), written from the RFCs with node's own
   * HKDF, independently of the daemon's code: one aes128gcm record, delimiter 0x02, padding stripped.
   */
  decrypt(message: Buffer): string {
    const salt = message.subarray(0, 16);
    const recordSize = message.readUInt32BE(16);
    const keyIdLength = message.readUInt8(20);
    const senderPublicKey = message.subarray(21, 21 + keyIdLength);
    const record = message.subarray(21 + keyIdLength);
    if (record.length > recordSize) throw new Error('one record larger than the announced record size');
    const sharedSecret = this.ecdh.computeSecret(senderPublicKey);
    const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), this.publicKey, senderPublicKey]);
    const inputKey = Buffer.from(hkdfSync('sha256', sharedSecret, this.auth, keyInfo, 32));
    const contentKey = Buffer.from(
      hkdfSync('sha256', inputKey, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16),
    );
    const nonce = Buffer.from(hkdfSync('sha256', inputKey, salt, Buffer.from('Content-Encoding: nonce\0'), 12));
    const decipher = createDecipheriv('aes-128-gcm', contentKey, nonce);
    decipher.setAuthTag(record.subarray(record.length - 16));
    const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
    let end = padded.length - 1;
    while (end >= 0 && padded[end] === 0) end -= 1;
    if (padded[end] !== 2) throw new Error('the last record does not end with the 0x02 delimiter');
    return padded.subarray(0, end).toString('utf8');
  }
}

export interface VapidClaims {
  readonly aud: string;
  readonly exp: number;
  readonly sub: string;
}

/**
 * Checks `Authorization: vapid t=<JWT>, k=<key>` as a push service does (RFC 8292): k is the key the
 * subscription was made with, the JWT is ES256 and verifies against it. Returns the claims, or throws.
 */
export function verifyVapid(authorization: string | undefined, expectedKey: string): VapidClaims {
  const match = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+), k=([A-Za-z0-9_-]+)$/.exec(
    authorization ?? '',
  );
  if (match === null) throw new Error(`not a vapid authorization: ${authorization}`);
  const [token, key] = [match[1]!, match[2]!];
  if (key !== expectedKey) throw new Error('k is not the served public key');
  const [header, claims, signature] = token.split('.') as [string, string, string];
  const decode = (segment: string) =>
    JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
  if (decode(header)['alg'] !== 'ES256') throw new Error('the JWT is not ES256');
  const point = Buffer.from(key, 'base64url');
  const publicKey = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33).toString('base64url'),
    },
    format: 'jwk',
  });
  const valid = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    { key: publicKey, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  if (!valid) throw new Error('the JWT signature does not verify');
  return decode(claims) as unknown as VapidClaims;
}

export interface PushRequest {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  readonly status: number;
}

/** A push service stand-in on 127.0.0.1: records each message and answers with the status a test sets. */
export class TestPushService extends Arrivals<PushRequest> {
  /** The status the next messages get (201, as push services answer; 410 when the subscription is gone). */
  status = 201;
  readonly origin: string;
  private readonly server: Server;

  private constructor(server: Server, origin: string) {
    super();
    this.server = server;
    this.origin = origin;
  }

  static async start(): Promise<TestPushService> {
    let service: TestPushService | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const status = service!.status;
        service!.record({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks), status });
        response.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    service = new TestPushService(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return service;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
