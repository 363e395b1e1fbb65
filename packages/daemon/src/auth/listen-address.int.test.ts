import { describe, expect, it } from 'vitest';
import { statusWithHost, useTestDaemon } from '../test-daemon.test-helper.js';

const startTestDaemon = useTestDaemon();

const beyondLoopback = (line: { message: string | undefined }) => line.message?.includes('beyond loopback') === true;

describe('loopback, as the daemon judges it', () => {
  it('says nothing of a bind that reached a loopback address, whatever the host was called', async () => {
    // "127.1" is a name starting with "127." that the system resolves to 127.0.0.1: the bound address decides.
    for (const host of ['127.1', '127.0.0.2', '::1']) {
      const { daemon, lines } = await startTestDaemon({ host });
      expect(lines.filter(beyondLoopback), host).toEqual([]);
      await daemon.close();
    }
  });

  it('listens on an IPv6 address written as in a URL, with brackets, and answers there', async () => {
    const { daemon, lines } = await startTestDaemon({ host: '[::1]' });
    expect(lines.filter(beyondLoopback)).toEqual([]);
    expect(daemon.url).toBe(`http://[::1]:${daemon.port}`);
    expect((await fetch(`${daemon.url}/health`)).status).toBe(200);
  });

  it('refuses a Host header that only starts with "127." (DNS rebinding) and takes the loopback literal', async () => {
    const { daemon } = await startTestDaemon();
    expect(await statusWithHost(daemon.port, `127.x.example:${daemon.port}`)).toBe(403);
    expect(await statusWithHost(daemon.port, `127.0.0.1.nip.io:${daemon.port}`)).toBe(403);
    expect(await statusWithHost(daemon.port, `127.0.0.1:${daemon.port}`)).toBe(200);
  });
});
