import { describe, expect, it } from 'vitest';
import { encryptPushPayload, maxPushPlaintextBytes } from './web-push-encryption.js';

const fromBase64Url = (text: string) => Buffer.from(text, 'base64url');

// RFC 8291, Appendix A, with the line breaks of its figures removed.
const vector = {
  plaintext: 'When I grow up, I want to be a watermelon',
  senderPrivateKey: 'yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw',
  userAgentPublicKey: 'BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4',
  salt: 'DGv6ra1nlYgDCS1FRnbzlw',
  authSecret: 'BTBZMqHH6r4Tts7J_aSIgg',
  message:
    'DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN',
};

describe('Web Push encryption (RFC 8291)', () => {
  it("reproduces the RFC's Appendix A message byte for byte", () => {
    const message = encryptPushPayload({
      plaintext: Buffer.from(vector.plaintext, 'utf8'),
      userAgentPublicKey: fromBase64Url(vector.userAgentPublicKey),
      authSecret: fromBase64Url(vector.authSecret),
      salt: fromBase64Url(vector.salt),
      senderPrivateKey: fromBase64Url(vector.senderPrivateKey),
    });
    expect(message.toString('base64url')).toBe(vector.message);
  });

  it('uses a fresh key pair and salt for every message', () => {
    const input = {
      plaintext: Buffer.from(vector.plaintext, 'utf8'),
      userAgentPublicKey: fromBase64Url(vector.userAgentPublicKey),
      authSecret: fromBase64Url(vector.authSecret),
    };
    const first = encryptPushPayload(input);
    const second = encryptPushPayload(input);
    expect(first.subarray(0, 16).equals(second.subarray(0, 16))).toBe(false);
    expect(first.subarray(21, 86).equals(second.subarray(21, 86))).toBe(false);
    expect(first.length).toBe(vector.message.length * 0.75);
  });

  it('refuses a plaintext that would not fit the 4,096 bytes push services accept', () => {
    const input = {
      userAgentPublicKey: fromBase64Url(vector.userAgentPublicKey),
      authSecret: fromBase64Url(vector.authSecret),
    };
    expect(encryptPushPayload({ ...input, plaintext: Buffer.alloc(maxPushPlaintextBytes) }).length).toBe(4096);
    expect(() => encryptPushPayload({ ...input, plaintext: Buffer.alloc(maxPushPlaintextBytes + 1) })).toThrow(
      RangeError,
    );
  });
});
