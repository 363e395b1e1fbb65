import { createHmac } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { afterEach, describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-serve-notify-');
const { serve, output } = useTetherServe(fixture);

let receiver: Server | undefined;
afterEach(async () => {
  receiver?.closeAllConnections();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  receiver = undefined;
});

/** A receiver on 127.0.0.1 that resolves with the first notification of a kind. */
async function receiveFirst(
  kind: string,
): Promise<{ url: string; received: Promise<{ headers: IncomingHttpHeaders; raw: string }> }> {
  let deliver: (value: { headers: IncomingHttpHeaders; raw: string }) => void = () => undefined;
  const received = new Promise<{ headers: IncomingHttpHeaders; raw: string }>((resolve) => {
    deliver = resolve;
  });
  receiver = createServer((request, response) => {
    let raw = '';
    request.on('data', (chunk) => {
      raw += chunk;
    });
    request.on('end', () => {
      response.writeHead(204).end();
      if ((JSON.parse(raw) as { kind: string }).kind === kind) deliver({ headers: request.headers, raw });
    });
  });
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, received };
}

function tether(args: string[]) {
  return spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment, stdin: 'ignore' }).finished;
}

describe('tether serve --notify', () => {
  it('POSTs a run_completed signed with the secret in the data dir', async () => {
    const { url: hook, received } = await receiveFirst('run_completed');
    await serve(['--notify', hook]);
    fixture.api.enqueue(textReply('Noted.'));
    expect((await tether(['run', 'Hello'])).code).toBe(0);
    const notification = await received;
    const secretFile = path.join(fixture.environment['TETHER_HOME']!, 'notification-secret');
    const secret = readFileSync(secretFile, 'utf8').trim();
    const timestamp = notification.headers['x-tether-timestamp'] as string;
    expect(notification.headers['x-tether-signature']).toBe(
      `sha256=${createHmac('sha256', secret).update(`${timestamp}.${notification.raw}`).digest('hex')}`,
    );
    expect(JSON.parse(notification.raw)).toMatchObject({ kind: 'run_completed', run: { outcome: 'succeeded' } });
    expect(output()).toContain(`notifications: signed with the secret in ${secretFile}`);
  });

  it('names no shared secret file when every receiver brings its own secret', async () => {
    const { url: hook, received } = await receiveFirst('run_completed');
    const configFile = path.join(fixture.root, 'notify.json');
    writeFileSync(configFile, JSON.stringify({ receivers: [{ url: hook, secret: 'a-secret-of-its-own-0123' }] }), {
      mode: 0o600,
    });
    await serve(['--notify-config', configFile]);
    fixture.api.enqueue(textReply('Noted.'));
    expect((await tether(['run', 'Hello'])).code).toBe(0);
    const notification = await received;
    const timestamp = notification.headers['x-tether-timestamp'] as string;
    expect(notification.headers['x-tether-signature']).toBe(
      `sha256=${createHmac('sha256', 'a-secret-of-its-own-0123').update(`${timestamp}.${notification.raw}`).digest('hex')}`,
    );
    expect(output()).toContain('token: run `tether token`');
    expect(output()).not.toContain('signed with the secret');
    expect(existsSync(path.join(fixture.environment['TETHER_HOME']!, 'notification-secret'))).toBe(false);
  });

  it('refuses a plain-http receiver beyond this machine, saying which flag allows it', async () => {
    const refused = await tether(['serve', '--port', '0', '--notify', 'http://192.0.2.10/hook']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('not this machine');
    expect(refused.stderr).toContain('--notify-allow-http');
    expect((await tether(['serve', '--notify-allow-http'])).stderr).toContain('--notify-allow-http goes with --notify');
  });
});
