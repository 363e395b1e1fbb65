import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import type { SubmitTurnReceipt } from '@tether/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingLogger, client, daemonPerTest, dataDirOf } from './daemon-test-helpers.js';
import { deliveryFigures } from './notifications-test-receiver.js';
import { metrics, startApprovalRun, webDirectory } from './notifications-test-session.js';
import { TestBrowserKeys, TestPushService, verifyVapid } from './web-push-test-service.js';

const { start, daemonOn } = daemonPerTest();
const services: TestPushService[] = [];
const temporaryDirectories: string[] = [];

afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.close()));
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

async function pushService(): Promise<TestPushService> {
  const started = await TestPushService.start();
  services.push(started);
  return started;
}

const subject = 'mailto:ops@example.com';

describe('Web Push', () => {
  it('a registered browser gets each notification encrypted for it with a VAPID token; a 410 removes it', async () => {
    const service = await pushService();
    const logger = new RecordingLogger();
    const { environment, daemon, api } = await start({
      logger,
      staticDirectory: await webDirectory(temporaryDirectories),
      notifications: { webPush: { subject, allowLoopbackHttpEndpoints: true } },
    });

    // The key is served behind the token only.
    expect((await fetch(`${daemon.url}/v1/push/key`)).status).toBe(401);
    const keyResponse = await api.request('GET', '/v1/push/key');
    expect(keyResponse.status).toBe(200);
    const { enabled, publicKey } = (await keyResponse.json()) as { enabled: boolean; publicKey: string };
    expect(enabled).toBe(true);
    expect(Buffer.from(publicKey, 'base64url')).toHaveLength(65);
    const keyFile = path.join(dataDirOf(environment), 'web-push-vapid-key.json');
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);

    const browser = new TestBrowserKeys();
    const endpoint = `${service.origin}/push/browser-1`;
    const registered = await api.request('POST', '/v1/push/subscriptions', { body: browser.subscription(endpoint) });
    expect(registered.status).toBe(201);
    const again = await api.request('POST', '/v1/push/subscriptions', { body: browser.subscription(endpoint) });
    expect(again.status).toBe(200);
    const subscriptionsFile = path.join(dataDirOf(environment), 'web-push-subscriptions.json');
    expect((await stat(subscriptionsFile)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(subscriptionsFile, 'utf8')).subscriptions).toMatchObject([{ endpoint }]);

    const { sessionId, runId } = await startApprovalRun(environment, api);
    const decrypted = (request: { body: Buffer }) => JSON.parse(browser.decrypt(request.body)) as Record<string, any>;
    const asked = await service.waitFor((request) => decrypted(request).kind === 'interaction_requested');
    expect(asked.path).toBe('/push/browser-1');
    expect(asked.headers['content-encoding']).toBe('aes128gcm');
    expect(asked.headers['ttl']).toBe('3600');
    expect(asked.headers['urgency']).toBe('high');
    const claims = verifyVapid(asked.headers['authorization'], publicKey);
    expect(claims.aud).toBe(service.origin);
    expect(claims.sub).toBe(subject);
    expect(claims.exp * 1000).toBeGreaterThan(Date.now());
    expect(claims.exp * 1000).toBeLessThanOrEqual(Date.now() + 24 * 3600 * 1000);
    // The body is the webhooks' notification, links included; the tool's input is not in it.
    const body = decrypted(asked);
    expect(body).toMatchObject({
      version: 1,
      kind: 'interaction_requested',
      session: { id: sessionId, title: 'Write it.' },
      runId,
      interaction: { kind: 'approval', tool: 'Bash' },
      links: { open: `${daemon.url}/sessions/${sessionId}` },
    });
    expect(JSON.stringify(body)).not.toContain('approved.txt');
    expect(body['links'].approve).toMatch(new RegExp(`^${daemon.url}/v1/links/[A-Za-z0-9_-]{43}$`));
    expect(body['links'].deny).toMatch(new RegExp(`^${daemon.url}/v1/links/[A-Za-z0-9_-]{43}$`));

    // The pushed link answers like a webhook's: through its POST, once.
    expect((await fetch(body['links'].approve, { method: 'POST' })).status).toBe(200);
    expect(await daemon.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const done = await service.waitFor((request) => decrypted(request).kind === 'run_completed');
    expect(done.headers['urgency']).toBe('normal');
    expect(decrypted(done)).toMatchObject({ runId, run: { outcome: 'succeeded' } });
    const receiverName = (
      logger.lines.find((line) => line.message === 'a browser registered for notifications') as { receiver: string }
    ).receiver;
    expect(receiverName).toMatch(/^push-[0-9a-f]{12}$/);
    await logger.waitFor(
      (line) =>
        line.message === 'notification delivered' &&
        line['receiver'] === receiverName &&
        line['kind'] === 'run_completed',
    );
    expect(deliveryFigures(await metrics(daemon), receiverName)).toMatchObject({ sent: 2, failed: 0 });
    // The endpoint, a capability URL, is never logged.
    expect(JSON.stringify(logger.lines)).not.toContain('/push/browser-1');

    // The push service says the subscription is gone: the daemon forgets it, and pushes nothing more there.
    service.status = 410;
    environment.api.enqueue(textReply('Second.'));
    const second = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Again.' }],
    });
    await service.waitFor((request) => request.status === 410);
    await logger.waitFor((line) => line.message === 'a push subscription is gone (404/410): removed');
    expect(JSON.parse(await readFile(subscriptionsFile, 'utf8')).subscriptions).toEqual([]);
    expect(await daemon.runtime.waitForRun(second.runId)).toMatchObject({ outcome: 'succeeded' });
    // A browser still registered gets the next run's notification; the removed one gets nothing.
    const otherBrowser = new TestBrowserKeys();
    const otherEndpoint = `${service.origin}/push/browser-2`;
    service.status = 201;
    await api.request('POST', '/v1/push/subscriptions', { body: otherBrowser.subscription(otherEndpoint) });
    environment.api.enqueue(textReply('Third.'));
    const third = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Once more.' }],
    });
    await service.waitFor(
      (request) =>
        request.path === '/push/browser-2' && JSON.parse(otherBrowser.decrypt(request.body)).runId === third.runId,
    );
    expect(
      service.received.filter((request) => request.path === '/push/browser-1').map((request) => request.status),
    ).toEqual([201, 201, 410]);
    await api.request('DELETE', '/v1/push/subscriptions', { body: { endpoint: otherEndpoint } });

    // A browser can also turn notifications off itself.
    const registeredAgain = await api.request('POST', '/v1/push/subscriptions', {
      body: browser.subscription(endpoint),
    });
    expect(registeredAgain.status).toBe(201);
    const removed = await api.request('DELETE', '/v1/push/subscriptions', { body: { endpoint } });
    expect(await removed.json()).toEqual({ removed: true });
    expect(JSON.parse(await readFile(subscriptionsFile, 'utf8')).subscriptions).toEqual([]);
  });

  it('refuses subscriptions it could not push to safely, past the bound, and every subscription when Web Push is off', async () => {
    const { environment, daemon, api } = await start({
      notifications: { webPush: { subject, maxSubscriptions: 1 } },
    });
    const browser = new TestBrowserKeys();
    const refusal = async (input: unknown) => {
      const response = await api.request('POST', '/v1/push/subscriptions', { body: input });
      return {
        status: response.status,
        error: ((await response.json()) as { error: { code: string; details?: unknown } }).error,
      };
    };
    // Plain http, even to this machine, without the test-only option; a bad key; a wrong shape.
    expect(await refusal(browser.subscription('http://127.0.0.1:9/push'))).toMatchObject({
      status: 400,
      error: { code: 'invalid_command', details: { reason: 'push_subscription_invalid' } },
    });
    expect(
      await refusal({
        endpoint: 'https://push.example/1',
        keys: { p256dh: Buffer.alloc(65, 4).toString('base64url'), auth: browser.subscription('').keys.auth },
      }),
    ).toMatchObject({ status: 400, error: { code: 'invalid_command' } });
    expect(await refusal({ endpoint: 'https://push.example/1' })).toMatchObject({ status: 400 });
    expect(
      (await api.request('POST', '/v1/push/subscriptions', { body: browser.subscription('https://push.example/1') }))
        .status,
    ).toBe(201);
    expect(await refusal(new TestBrowserKeys().subscription('https://push.example/2'))).toMatchObject({
      status: 429,
      error: { code: 'capacity_exceeded' },
    });
    const stored = JSON.parse(await readFile(path.join(dataDirOf(environment), 'web-push-subscriptions.json'), 'utf8'));
    expect(stored.subscriptions).toMatchObject([{ endpoint: 'https://push.example/1' }]);
    await daemon.close();

    // Off (no subject given): the key route says so as an answer, the subscription routes refuse.
    const off = client(await daemonOn(environment, {}));
    const key = await off.request('GET', '/v1/push/key');
    expect(key.status).toBe(200);
    expect(await key.json()).toEqual({ enabled: false });
    const subscribe = await off.request('POST', '/v1/push/subscriptions', {
      body: new TestBrowserKeys().subscription('https://push.example/3'),
    });
    expect(subscribe.status).toBe(501);
    expect(await subscribe.json()).toMatchObject({
      error: { code: 'capability_unsupported', details: { reason: 'web_push_off' } },
    });
  });
});
