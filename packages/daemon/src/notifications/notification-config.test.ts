import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentError } from '@tether/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveNotifications } from './notification-config.js';

/** The AgentError a promise is rejected with (a test failure when it resolves or throws anything else). */
async function agentErrorOf(promise: Promise<unknown>): Promise<AgentError> {
  const error = await promise.then(
    () => new Error('expected a refusal'),
    (reason: unknown) => reason,
  );
  if (!AgentError.isInstance(error)) throw error;
  return error;
}

// Every folder a test made: some tests write more than one config file.
const directories: string[] = [];
afterEach(async () => {
  for (const directory of directories.splice(0)) await rm(directory, { recursive: true, force: true });
});

/** A config file as its owner should keep it (0600), or with the mode given. */
async function configFile(content: unknown, mode = 0o600): Promise<string> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'tether-notify-config-'));
  directories.push(directory);
  const file = path.join(directory, 'notify.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content), { mode });
  await chmod(file, mode);
  return file;
}

describe('the config file', () => {
  // Whoever can write it chooses where approvals' one-time links go (an approval, for them, is one
  // click); whoever can read it has the receivers' secrets and webhook URLs.
  it('is refused when other users can read or write it, or another user owns it, without repeating its contents', async () => {
    const content = {
      receivers: [{ url: 'https://relay.example/hook/SECRET-PATH', secret: 'receiver-secret-0123456789' }],
    };
    for (const mode of [0o644, 0o620, 0o604]) {
      const file = await configFile(content, mode);
      const refused = await agentErrorOf(resolveNotifications({ configFile: file }));
      expect(refused, mode.toString(8)).toMatchObject({
        code: 'invalid_command',
        details: { reason: 'notification_config_unsafe' },
      });
      expect(refused.message).toContain(`chmod 600 ${file}`);
      expect(refused.message).not.toMatch(/SECRET-PATH|receiver-secret/);
    }
    if (process.getuid?.() !== 0)
      throw new Error('This test gives a file to another user (chown), which needs root: run the suite as root.');
    const foreign = await configFile(content);
    await chown(foreign, 65534, 65534);
    const refused = await agentErrorOf(resolveNotifications({ configFile: foreign }));
    expect(refused.details).toMatchObject({ reason: 'notification_config_unsafe' });
    expect(refused.message).toContain('owned by uid 65534');
    const { receivers } = await resolveNotifications({ configFile: await configFile(content) });
    expect(receivers).toHaveLength(1);
  });
});

describe('notification receivers', () => {
  it('is refused, saying what to check, when it cannot be read: missing, or a folder', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'tether-notify-config-'));
    directories.push(directory);
    for (const [file, code] of [
      [path.join(directory, 'missing.json'), 'ENOENT'],
      [directory, 'EISDIR'],
    ] as const) {
      const refused = await agentErrorOf(resolveNotifications({ configFile: file }));
      expect(refused.code).toBe('invalid_command');
      expect(refused.message).toBe(
        `The notification config ${file} cannot be read (${code}). Check the path given (tether serve --notify-config), and that it names a file this user can read.`,
      );
    }
  });

  it('takes https anywhere and plain http on loopback, with the default events', async () => {
    const { receivers, settings } = await resolveNotifications({
      receivers: [{ url: 'https://relay.example/hook/SECRET-PATH' }, { url: 'http://127.0.0.1:9000/hook' }],
    });
    expect(receivers.map((receiver) => receiver.name)).toEqual(['1-relay.example', '2-127.0.0.1:9000']);
    expect([...receivers[0]!.kinds]).toEqual(['interaction_requested', 'run_completed', 'run_failed']);
    expect(receivers[0]!.secret).toBeNull();
    expect(settings).toMatchObject({ attempts: 5, queueLimit: 100 });
  });

  it('refuses plain http beyond loopback unless allowed, and URLs with credentials, without repeating them', async () => {
    const insecure = await agentErrorOf(resolveNotifications({ receivers: [{ url: 'http://10.0.0.5/hook' }] }));
    expect(insecure).toMatchObject({ code: 'invalid_command', details: { reason: 'notification_url_insecure' } });
    expect(insecure.message).toContain('--notify-allow-http');
    const allowed = await resolveNotifications({ receivers: [{ url: 'http://10.0.0.5/hook' }], allowPlainHttp: true });
    expect(allowed.receivers).toHaveLength(1);
    const credentials = await agentErrorOf(
      resolveNotifications({ receivers: [{ url: 'https://user:hunter2-password@relay.example/' }] }),
    );
    expect(credentials.details).toMatchObject({ reason: 'notification_url_invalid' });
    expect(credentials.message).not.toContain('hunter2');
    const scheme = await agentErrorOf(resolveNotifications({ receivers: [{ url: 'ftp://relay.example/' }] }));
    expect(scheme.details).toMatchObject({ reason: 'notification_url_invalid' });
  });

  it('reads a config file: events, secrets and thresholds per receiver; a bad one says where', async () => {
    const file = await configFile({
      receivers: [
        {
          url: 'https://ntfy.example/tether',
          events: ['interaction_requested', 'session_waiting'],
          sessionWaitingSeconds: 120,
          secret: 'a-secret-of-sixteen+',
          name: 'ntfy',
        },
      ],
    });
    const { receivers } = await resolveNotifications({ configFile: file, receivers: [{ url: 'https://b.example/' }] });
    expect(receivers).toMatchObject([
      { name: '1-b.example' },
      { name: 'ntfy', secret: 'a-secret-of-sixteen+', sessionWaitingMs: 120_000 },
    ]);
    expect([...receivers[1]!.kinds]).toEqual(['interaction_requested', 'session_waiting']);

    const short = await agentErrorOf(
      resolveNotifications({
        configFile: await configFile({ receivers: [{ url: 'https://a.example', secret: 'short' }] }),
      }),
    );
    expect(short.details).toMatchObject({ reason: 'notification_config_invalid' });
    expect(short.message).toContain('receivers.0.secret');
    expect(short.message).not.toContain('"short"');
    const notJson = await agentErrorOf(resolveNotifications({ configFile: await configFile('{receivers:') }));
    expect(notJson.message).toContain('is not JSON');
    const missing = await agentErrorOf(resolveNotifications({ configFile: '/nonexistent/notify.json' }));
    expect(missing.message).toContain('ENOENT');
  });

  it('turns Web Push on from the options or the file, with a subject push services can write to', async () => {
    const fromFile = await resolveNotifications({
      configFile: await configFile({ webPush: { subject: 'mailto:ops@example.com', events: ['run_failed'] } }),
    });
    expect(fromFile.receivers).toEqual([]);
    expect(fromFile.webPush).toMatchObject({
      subject: 'mailto:ops@example.com',
      ttlSeconds: 3600,
      maxSubscriptions: 20,
      allowLoopbackHttpEndpoints: false,
    });
    expect([...fromFile.webPush!.kinds]).toEqual(['run_failed']);
    expect((await resolveNotifications({ receivers: [] })).webPush).toBeNull();

    const noContact = await agentErrorOf(resolveNotifications({ webPush: { subject: 'ops team' } }));
    expect(noContact.details).toMatchObject({ reason: 'notification_config_invalid' });
    expect(noContact.message).toContain('mailto: or https:');
    const badKind = await agentErrorOf(
      resolveNotifications({
        webPush: { subject: 'https://ops.example', events: ['everything' as 'run_failed'] },
      }),
    );
    expect(badKind.message).toContain('"everything" is not an event kind');
  });
});
