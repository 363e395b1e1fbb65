import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './loopback-host.js';

describe('which hosts are loopback', () => {
  it('takes localhost, IPv4 literals in 127.0.0.0/8 and ::1 (bracketed or not)', () => {
    for (const host of ['localhost', 'LocalHost', '127.0.0.1', '127.0.0.2', '127.255.255.254', '::1', '[::1]'])
      expect(isLoopbackHost(host), host).toBe(true);
  });

  it('refuses a name that only starts with "127.", and every other address', () => {
    for (const host of [
      '127.x.example',
      '127.0.0.1.nip.io',
      '127.0.0.1.',
      '127.evil',
      '127.256.0.1',
      '1127.0.0.1',
      'localhost.example',
      '0.0.0.0',
      '::',
      '10.0.0.5',
      '128.0.0.1',
      '::ffff:10.0.0.5',
      '',
    ])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});
