import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';

const fixture = useCommandFixture('tether-serve-host-');
const served = useTetherServe(fixture);

// serve() resolves on the "listening on" line of stderr, which the warning, if any, comes before.
const warning = 'WARNING: listening on';

describe('tether serve --host', () => {
  it('says nothing of a loopback address other than 127.0.0.1 (all of 127.0.0.0/8 is this machine)', async () => {
    const url = await served.serve(['--host', '127.0.0.2', '--no-web']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    expect(served.output()).not.toContain(warning);
  });

  it('warns of an address beyond loopback', async () => {
    await served.serve(['--host', '0.0.0.0', '--no-web']);
    expect(served.output()).toContain(
      'tether serve: WARNING: listening on 0.0.0.0 exposes the API beyond this machine; every request still needs the token.',
    );
  });

  it('on every address, with notifications on and no --advertise-url, says their links open only here', async () => {
    const url = await served.serve(['--host', '0.0.0.0', '--no-web', '--notify', 'http://127.0.0.1:9/hook']);
    await expect.poll(() => served.output()).toContain('token: run `tether token`');
    expect(served.output()).toContain(
      `tether serve: notifications' links point at ${url}, which opens only on this machine; pass --advertise-url`,
    );
  });

  it('with --advertise-url, says nothing of the links', async () => {
    await served.serve([
      '--host',
      '0.0.0.0',
      '--no-web',
      '--notify',
      'http://127.0.0.1:9/hook',
      '--advertise-url',
      'http://192.0.2.1:7437',
    ]);
    await expect.poll(() => served.output()).toContain('token: run `tether token`');
    expect(served.output()).not.toContain("notifications' links point at");
  });
});
