import { createCipheriv, createECDH, createHmac, randomBytes } from 'node:crypto';

/** The record size announced in the header: one record carries the whole message (RFC 8291 §4 allows one). */
const recordSize = 4096;
const keyLength = 16;
const nonceLength = 12;
const tagLength = 16;
/** salt (16) + rs (4) + idlen (1) + keyid (the sender's 65-byte public key). */
const headerLength = 16 + 4 + 1 + 65;

/**
 * The most plaintext one message carries: push services must accept 4,096 bytes of body (RFC 8030
 * §7.2), which holds the header, the plaintext, its delimiter octet and the tag.
 */
export const maxPushPlaintextBytes = recordSize - headerLength - 1 - tagLength;

/** HKDF-Extract and one block of HKDF-Expand (RFC 5869), all RFC 8291 needs: every output is at most 32 bytes. */
function hkdf(salt: Buffer, inputKey: Buffer, info: Buffer, length: number): Buffer {
  const pseudoRandomKey = createHmac('sha256', salt).update(inputKey).digest();
  return createHmac('sha256', pseudoRandomKey)
    .update(Buffer.concat([info, Buffer.from([1])]))
    .digest()
    .subarray(0, length);
}

export interface PushEncryptionInput {
  readonly plaintext: Buffer;
  /** The subscription's p256dh: the browser's P-256 public key, uncompressed (65 bytes). */
  readonly userAgentPublicKey: Buffer;
  /** The subscription's auth secret (16 bytes). */
  readonly authSecret: Buffer;
  /** Fixed only by the RFC's test vector; otherwise fresh for every message. */
  readonly salt?: Buffer;
  readonly senderPrivateKey?: Buffer;
}

/**
 * A push message body, encrypted for one subscription as RFC 8291 says (Content-Encoding: aes128gcm,
 * RFC 8188): a fresh ECDH key pair and salt per message, the shared secret mixed with the
 * subscription's auth secret, one record padded by nothing but its 0x02 delimiter.
 */
export function encryptPushPayload(input: PushEncryptionInput): Buffer {
  if (input.plaintext.length > maxPushPlaintextBytes)
    throw new RangeError(`A push message holds at most ${maxPushPlaintextBytes} bytes of plaintext.`);
  const sender = createECDH('prime256v1');
  if (input.senderPrivateKey === undefined) sender.generateKeys();
  else sender.setPrivateKey(input.senderPrivateKey);
  const senderPublicKey = sender.getPublicKey();
  const sharedSecret = sender.computeSecret(input.userAgentPublicKey);
  // §3.4: IKM = HKDF(auth_secret, ecdh_secret, "WebPush: info" || 0x00 || ua_public || as_public, 32).
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0', 'latin1'), input.userAgentPublicKey, senderPublicKey]);
  const inputKey = hkdf(input.authSecret, sharedSecret, keyInfo, 32);
  // RFC 8188 §2.2 and §2.3: the content key and the nonce, from the salt.
  const salt = input.salt ?? randomBytes(16);
  const contentKey = hkdf(salt, inputKey, Buffer.from('Content-Encoding: aes128gcm\0', 'latin1'), keyLength);
  const nonce = hkdf(salt, inputKey, Buffer.from('Content-Encoding: nonce\0', 'latin1'), nonceLength);
  const cipher = createCipheriv('aes-128-gcm', contentKey, nonce);
  // 0x02: the last (and only) record's delimiter, no padding after it.
  const sealed = Buffer.concat([cipher.update(input.plaintext), cipher.update(Buffer.from([2])), cipher.final()]);
  const header = Buffer.alloc(headerLength);
  salt.copy(header, 0);
  header.writeUInt32BE(recordSize, 16);
  header.writeUInt8(senderPublicKey.length, 20);
  senderPublicKey.copy(header, 21);
  return Buffer.concat([header, sealed, cipher.getAuthTag()]);
}
