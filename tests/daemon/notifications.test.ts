import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SubmitTurnReceipt } from '@tether/protocol';
import { agentErrorOf, createClaudeTestEnvironment, sampleQuestions } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { RecordingLogger, daemonPerTest, dataDirOf, openSession, startTestDaemon } from './daemon-test-helpers.js';
import { TestReceiver, deliveryFigures, refusingUrl, signatureIsValid } from './notifications-test-receiver.js';
import { metrics, startApprovalRun, webDirectory } from './notifications-test-session.js';

const { start } = daemonPerTest();
const receivers: TestReceiver[] = [];
const temporaryDirectories: string[] = [];

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await Promise.all(temporaryDirectories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

async function receiver(behaviour?: Parameters<typeof TestReceiver.start>[0]): Promise<TestReceiver> {
  const started = await TestReceiver.start(behaviour);
  receivers.push(started);
  return started;
}

const delivered = (receiverName: string, kind: string) => (line: Record<string, unknown>) =>
  line['message'] === 'notification delivered' && line['receiver'] === receiverName && line['kind'] === kind;

describe('notifications', () => {
  it('a receiver gets signed notifications for an approval and the finished run; the one-time link answers once', async () => {
    const secret = 'receiver-secret-0123456789';
    const hook = await receiver();
    const logger = new RecordingLogger();
    const { environment, daemon, api } = await start({
      logger,
      staticDirectory: await webDirectory(temporaryDirectories),
      notifications: { receivers: [{ url: hook.url, secret, name: 'phone' }] },
    });
    const { sessionId, runId } = await startApprovalRun(environment, api);

    const asked = await hook.waitFor((notification) => notification.body.kind === 'interaction_requested');
    expect(signatureIsValid(asked, secret)).toBe(true);
    expect(signatureIsValid(asked, 'some-other-secret-0123456789')).toBe(false);
    expect(asked.headers['content-type']).toBe('application/json');
    expect(asked.headers['x-tether-event']).toBe('interaction_requested');
    const [snapshot] = [await daemon.runtime.getSession(sessionId)];
    const interactionRef = snapshot.pendingInteractions[0]!.interactionRef;
    expect(asked.body).toMatchObject({
      version: 1,
      kind: 'interaction_requested',
      session: { id: sessionId, title: 'Write it.', workspacePath: snapshot.workspaceStatus!.directory },
      runId,
      interaction: { ref: interactionRef, kind: 'approval', tool: 'Bash', category: 'command' },
      links: { open: `${daemon.url}/sessions/${sessionId}` },
    });
    // The tool's input (a command may hold a secret) is never sent; only the tool and a bounded summary.
    expect(asked.raw).not.toContain('approved.txt');
    const { approve, deny } = asked.body.links as { approve: string; deny: string };
    expect(approve).toMatch(new RegExp(`^${daemon.url}/v1/links/[A-Za-z0-9_-]{43}$`));
    expect(deny).toMatch(new RegExp(`^${daemon.url}/v1/links/[A-Za-z0-9_-]{43}$`));
    expect(approve).not.toBe(deny);

    // The link's token grants that one answer, nothing else: the API refuses it as a bearer token.
    const linkToken = approve.split('/').at(-1)!;
    const asBearer = await fetch(`${daemon.url}/v1/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${linkToken}` },
    });
    expect(asBearer.status).toBe(401);

    // GET (what a chat app's link preview does) shows what the link would do, and answers nothing.
    const page = await fetch(approve, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const html = await page.text();
    expect(html).toContain('<form method="post">');
    expect(html).toContain('Approve once: Bash');
    expect(await (await fetch(approve)).json()).toMatchObject({ choice: 'approve', sessionId, interactionRef });
    const stillWaiting = await daemon.runtime.getSession(sessionId);
    expect(stillWaiting.state).toBe('waiting');
    expect(stillWaiting.pendingInteractions).toMatchObject([{ interactionRef, status: 'pending' }]);

    // POST answers through respond_interaction, once.
    const answered = await fetch(approve, { method: 'POST' });
    expect(answered.status).toBe(200);
    expect(await answered.json()).toEqual({ answered: 'approve', sessionId, interactionRef, status: 'settled' });
    const again = await fetch(approve, { method: 'POST' });
    expect(again.status).toBe(410);
    expect(await again.json()).toMatchObject({ error: { code: 'link_unavailable' } });
    const otherChoice = await fetch(deny, { method: 'POST', headers: { accept: 'text/html' } });
    expect(otherChoice.status).toBe(410);
    expect(await otherChoice.text()).toContain('no longer answers anything');

    expect(await daemon.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const events = await daemon.runtime.readEvents(sessionId);
    const settled = events.filter((event) => event.type === 'interaction.settled');
    expect(settled).toMatchObject([
      { interactionRef, outcome: 'approved', by: 'host', answer: { decision: 'approve', scope: 'once' } },
    ]);

    const finished = await hook.waitFor((notification) => notification.body.kind === 'run_completed');
    expect(signatureIsValid(finished, secret)).toBe(true);
    expect(finished.body).toMatchObject({
      kind: 'run_completed',
      runId,
      session: { id: sessionId, title: 'Write it.' },
      run: { outcome: 'succeeded' },
      links: { open: `${daemon.url}/sessions/${sessionId}` },
    });
    expect(finished.body.links).not.toHaveProperty('approve');

    await logger.waitFor(delivered('phone', 'run_completed'));
    // The log names routes by pattern: neither a link's token nor the secret is ever written.
    expect(JSON.stringify(logger.lines)).not.toContain(linkToken);
    expect(JSON.stringify(logger.lines)).not.toContain(secret);
    const scrape = await metrics(daemon);
    expect(deliveryFigures(scrape, 'phone')).toEqual({
      sent: 2,
      failed: 0,
      retried: 0,
      dropped: 0,
      pending: 0,
      delivered: 2,
    });
  });

  it('a receiver that is down or stalled does not hold up the run; the metrics show it', async () => {
    const down = await refusingUrl();
    const stalled = await receiver('stall');
    const logger = new RecordingLogger();
    const { environment, daemon, api } = await start({
      logger,
      notifications: {
        receivers: [
          { url: down, name: 'down' },
          { url: stalled.url, name: 'stalled' },
        ],
        // Long enough that both deliveries are still under way when the run has ended.
        delivery: { firstRetryMs: 60_000, attemptTimeoutMs: 60_000 },
      },
    });
    const { sessionId, runId } = await startApprovalRun(environment, api);
    const asked = await stalled.waitFor((notification) => notification.body.kind === 'interaction_requested');
    await logger.waitFor(
      (line) => line['message'] === 'a notification attempt failed: retrying' && line['receiver'] === 'down',
    );

    await api.command({
      type: 'respond_interaction',
      sessionId,
      interactionRef: (asked.body['interaction'] as { ref: string }).ref,
      answer: { decision: 'approve' },
    });
    expect(await daemon.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    // The run's end went out while the first notification still has no answer.
    await stalled.waitFor((notification) => notification.body.kind === 'run_completed');

    const scrape = await metrics(daemon);
    expect(deliveryFigures(scrape, 'stalled')).toMatchObject({ sent: 0, failed: 0, pending: 2 });
    const toDown = deliveryFigures(scrape, 'down');
    expect(toDown).toMatchObject({ sent: 0, failed: 0, pending: 2 });
    expect(toDown.retried).toBeGreaterThanOrEqual(1);

    // Neither receiver brought a secret: both signed with the data dir's, which only the log's file path names.
    const secretFile = path.join(dataDirOf(environment), 'notification-secret');
    const secret = (await readFile(secretFile, 'utf8')).trim();
    expect((await stat(secretFile)).mode & 0o777).toBe(0o600);
    expect(signatureIsValid(asked, secret)).toBe(true);
    expect(await logger.waitFor((line) => line.message === 'notifications on')).toMatchObject({ secretFile });
    expect(JSON.stringify(logger.lines)).not.toContain(secret);
  });

  it('gives up after the last attempt, counts the failure, and does not retry a refusal', async () => {
    const unavailable = await receiver({ status: 503 });
    const refusing = await receiver({ status: 400 });
    const logger = new RecordingLogger();
    const { environment, daemon, api } = await start({
      logger,
      notifications: {
        receivers: [
          { url: unavailable.url, name: 'unavailable', events: ['run_completed'] },
          { url: refusing.url, name: 'refusing', events: ['run_completed'] },
        ],
        delivery: { attempts: 3, firstRetryMs: 20 },
      },
    });
    const sessionId = await openSession(api, environment.workspace);
    environment.api.enqueue(textReply('Hello.'));
    const { runId } = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Hi.' }],
    });
    expect(await daemon.runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const gaveUp = (name: string) => (line: Record<string, unknown>) =>
      line['receiver'] === name &&
      (line['message'] === 'a notification could not be delivered' ||
        line['message'] === 'a receiver refused a notification');
    expect(await logger.waitFor(gaveUp('unavailable'))).toMatchObject({ attempts: 3 });
    expect(await logger.waitFor(gaveUp('refusing'))).toMatchObject({
      attempts: 1,
      message: 'a receiver refused a notification',
    });

    // Every attempt carried the same delivery id (so a receiver can drop repeats), each freshly signed.
    expect(unavailable.received).toHaveLength(3);
    expect(new Set(unavailable.received.map((notification) => notification.body['id'])).size).toBe(1);
    expect(refusing.received).toHaveLength(1);
    const scrape = await metrics(daemon);
    expect(deliveryFigures(scrape, 'unavailable')).toMatchObject({ sent: 0, failed: 1, retried: 2, pending: 0 });
    expect(deliveryFigures(scrape, 'refusing')).toMatchObject({ sent: 0, failed: 1, retried: 0, pending: 0 });
  });

  it('tells a session_waiting receiver when an approval has waited its threshold, with fresh links', async () => {
    const waiting = await receiver();
    const immediate = await receiver();
    const { environment, daemon, api } = await start({
      notifications: {
        receivers: [
          { url: waiting.url, name: 'waiting', events: ['session_waiting'], sessionWaitingSeconds: 1 },
          { url: immediate.url, name: 'immediate', events: ['interaction_requested'] },
        ],
      },
    });
    const { sessionId, runId } = await startApprovalRun(environment, api);
    const first = await immediate.waitFor((notification) => notification.body.kind === 'interaction_requested');
    const late = await waiting.waitFor((notification) => notification.body.kind === 'session_waiting');
    expect(late.body).toMatchObject({
      kind: 'session_waiting',
      waitingSeconds: 1,
      runId,
      interaction: { ref: (first.body['interaction'] as { ref: string }).ref, tool: 'Bash' },
    });
    expect(waiting.received.map((notification) => notification.body.kind)).toEqual(['session_waiting']);
    // The reminder is told when it is sent: a threshold after the question, not at the question's time.
    const askedAt = Date.parse(first.body['at'] as string);
    expect(Date.parse(late.body['at'] as string) - askedAt).toBeGreaterThanOrEqual(1_000);

    // Its deny link answers; the first notification's approve link is then void.
    const denied = await fetch(late.body.links['deny']!, { method: 'POST' });
    expect(denied.status).toBe(200);
    expect((await fetch(first.body.links['approve']!, { method: 'POST' })).status).toBe(410);
    await daemon.runtime.waitForRun(runId);
    const events: ProtocolEvent[] = await daemon.runtime.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'interaction.settled')).toMatchObject([{ outcome: 'denied' }]);
  });

  it('a question set is sent with its questions and only the open link; a failed run as run_failed with its code', async () => {
    const hook = await receiver();
    const { environment, daemon, api } = await start({
      notifications: { receivers: [{ url: hook.url, events: ['interaction_requested', 'run_failed'] }] },
    });
    const sessionId = await openSession(api, environment.workspace);
    environment.api.enqueue(
      toolUseReply('AskUserQuestion', { questions: [sampleQuestions.color] }),
      textReply('Thanks.'),
      errorReply(500),
      errorReply(500),
    );
    const asking = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Ask me.' }],
    });
    const asked = await hook.waitFor((notification) => notification.body.kind === 'interaction_requested');
    expect(asked.body).toMatchObject({
      runId: asking.runId,
      interaction: {
        kind: 'question_set',
        tool: 'AskUserQuestion',
        questions: [{ header: 'Color', question: 'Which color should the button be?', options: ['Red', 'Blue'] }],
      },
    });
    // Questions need an answer only a person can type or pick: no one-time links, and no UI served here to open.
    expect(asked.body.links).toEqual({});
    await api.command({
      type: 'respond_interaction',
      sessionId,
      interactionRef: (asked.body['interaction'] as { ref: string }).ref,
      answer: { decision: 'answer', answers: [{ selected: ['Blue'] }] },
    });
    expect(await daemon.runtime.waitForRun(asking.runId)).toMatchObject({ outcome: 'succeeded' });

    const failing = await api.command<SubmitTurnReceipt>({
      type: 'submit_turn',
      sessionId,
      input: [{ type: 'text', text: 'Again.' }],
    });
    expect(await daemon.runtime.waitForRun(failing.runId)).toMatchObject({ outcome: 'failed' });
    const failed = await hook.waitFor((notification) => notification.body.kind === 'run_failed');
    expect(failed.body).toMatchObject({
      runId: failing.runId,
      run: { outcome: 'failed', errorCode: 'provider_api_error' },
    });
    // run_completed was not chosen: the succeeded run sent nothing.
    expect(hook.received.map((notification) => notification.body.kind)).toEqual([
      'interaction_requested',
      'run_failed',
    ]);
  });

  it('refuses at start a plain-http receiver beyond this machine, and a config file that is not valid', async () => {
    const environment = await createClaudeTestEnvironment();
    try {
      const insecure = await agentErrorOf(
        startTestDaemon(environment, { notifications: { receivers: [{ url: 'http://192.0.2.10/hook' }] } }),
      );
      expect(insecure.code).toBe('invalid_command');
      expect(insecure.details).toMatchObject({ reason: 'notification_url_insecure' });
      expect(insecure.message).toContain('--notify-allow-http');

      const configFile = path.join(environment.home, 'notify.json');
      await writeFile(
        configFile,
        JSON.stringify({ receivers: [{ url: 'https://relay.example/hook', events: ['run_exploded'] }] }),
        { mode: 0o600 },
      );
      const badKind = await agentErrorOf(startTestDaemon(environment, { notifications: { configFile } }));
      expect(badKind.code).toBe('invalid_command');
      expect(badKind.details).toMatchObject({ reason: 'notification_config_invalid' });
      expect(badKind.message).toContain('receivers.0.events.0');

      // Allowed explicitly (in the file), the same kind of URL starts.
      await writeFile(
        configFile,
        JSON.stringify({
          allowPlainHttp: true,
          receivers: [{ url: 'http://192.0.2.10/hook', events: ['run_failed'] }],
        }),
      );
      const daemon = await startTestDaemon(environment, { notifications: { configFile } });
      await daemon.close();
    } finally {
      await environment.cleanup();
    }
  });
});
