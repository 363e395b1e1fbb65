import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errorReply, holdReply, textReply } from '@tether/fake-anthropic-api';
import { createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore } from '@tether/store-sqlite';
import {
  agentErrorOf,
  answerText,
  processesWithEnvironment,
  runEvents,
  killProcessesWithEnvironment,
} from '@tether/testkit';
import { afterEach, expect, it } from 'vitest';
import {
  describeTransports,
  firstTurnOpening,
  history,
  runSequence,
  sessionSequence,
  turnRequests,
} from './conformance-harness.js';

async function waitForExit(home: string, pid: number): Promise<void> {
  // A process we signalled: poll its /proc entry until it is gone (zombies count as dead).
  while (processesWithEnvironment('HOME', home).includes(pid)) await new Promise((resolve) => setImmediate(resolve));
}

describeTransports('API errors, crashes, resume and close', ({ transport, start }) => {
  let home: string | undefined;
  afterEach(() => {
    // Whatever a crash test left running goes before the environment is removed.
    if (home) killProcessesWithEnvironment('HOME', home);
    home = undefined;
  });

  it('fails a run on an API 500 with the status (assistant error: a warning), surfaces the retry, and the next turn works', async () => {
    const environment = await start({ maxRetries: 1 });
    environment.api.enqueue(errorReply(500), errorReply(500), textReply('Recovered.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const failed = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'First.' }] });
    const events = await runEvents(runtime, sessionId, failed.runId);
    expect(runSequence(events, failed.runId)).toEqual([
      'run.started',
      'run.retrying:500',
      'diagnostic:warning:claude.assistant_error.server_error',
      // The failed turn is in the transcript (its input has a file checkpoint); no answer to cut after.
      'run.checkpointed',
      'run.completed:failed:provider_api_error',
    ]);
    expect(events.find((event) => event.type === 'run.retrying')).toMatchObject({
      attempt: 1,
      maxAttempts: 1,
      httpStatus: 500,
    });
    expect(events.at(-1)).toMatchObject({ error: { code: 'provider_api_error', details: { httpStatus: 500 } } });
    expect(answerText(events)).toBe('');
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Second.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Recovered.');
  });

  it('refuses a second turn while the first is running, and a duplicate commandId does not start another run', async () => {
    const environment = await start();
    environment.api.enqueue(holdReply());
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const command = {
      type: 'submit_turn',
      commandId: 'turn-a',
      sessionId,
      input: [{ type: 'text', text: 'Hold on.' }],
    } as const;
    const receipt = await runtime.dispatch(command);
    await environment.api.waitForRequests(1, { kind: 'turn' });
    expect(await runtime.dispatch(command)).toEqual(receipt);
    expect(
      (await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Another.' }] }))).code,
    ).toBe('run_active');
    expect(turnRequests(environment)).toHaveLength(1);
    expect((await runtime.getSession(sessionId)).activeRunId).toBe(receipt.runId);
  });

  it('closes a session, refuses later turns, and reopens it with its history (resume)', async () => {
    const environment = await start();
    environment.api.enqueue(textReply('Noted: MANGO.'), textReply('It was MANGO.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember MANGO.' }] })).runId,
    );
    await runtime.closeSession({ sessionId });
    expect(
      (await agentErrorOf(runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again?' }] }))).code,
    ).toBe('session_closed');
    await runtime.openSession({ continueSession: sessionId });
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'What fruit?' }] });
    expect(answerText(await runEvents(runtime, sessionId, second.runId))).toBe('It was MANGO.');
    expect(history(environment, 1)).toContain('Remember MANGO.');
    expect(await sessionSequence(runtime, sessionId)).toEqual([
      'session.opened',
      'run.started',
      ...firstTurnOpening,
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
      'session.closed',
      'session.process_stopped:closed',
      'session.opened',
      'run.started',
      // The resumed process reports the same mode, model and conversation id: nothing changed.
      'session.process_started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
  });

  it('continues a conversation in a new runtime on the same data dir, with its usage; cost per run also for a resumed process', async () => {
    const environment = await start();
    const dataDir = path.join(environment.home, 'tether-data');
    environment.api.enqueue(
      textReply('Stored: PAPAYA.', { usage: { inputTokens: 100, outputTokens: 10 } }),
      textReply('It was PAPAYA.', { usage: { inputTokens: 100, outputTokens: 10 } }),
    );
    const first = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    const { sessionId } = await first.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const firstRun = await first.waitForRun(
      (await first.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember PAPAYA.' }] })).runId,
    );
    await first.shutdown();
    const second = await environment.runtime({ store: await openSqliteStore({ dataDir }) });
    expect(await second.getSession(sessionId)).toMatchObject({
      state: 'idle',
      usage: { inputTokens: 100, outputTokens: 10 },
    });
    const two = await second.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    expect(answerText(await runEvents(second, sessionId, two.runId))).toBe('It was PAPAYA.');
    expect(history(environment, 1)).toContain('Stored: PAPAYA.');
    expect((await second.getRun(two.runId)).usage?.costUsd).toBeCloseTo(firstRun.usage!.costUsd!, 10);
    expect((await second.getSession(sessionId)).usage.inputTokens).toBe(200);
  });

  it('starts a new process with --resume when the old one died between turns', async () => {
    const environment = await start();
    home = environment.home;
    environment.api.enqueue(textReply('Noted: LIME.'), textReply('It was LIME.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun(
      (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Remember LIME.' }] })).runId,
    );
    const [pid] = processesWithEnvironment('HOME', environment.home);
    process.kill(pid!, 'SIGKILL');
    await waitForExit(environment.home, pid!);
    const two = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Which fruit?' }] });
    expect(answerText(await runEvents(runtime, sessionId, two.runId))).toBe('It was LIME.');
    expect(history(environment, 1)).toContain('Remember LIME.');
  });

  it('a live change asked for as the agent dies is refused provider_crashed and not applied, or applied at the next launch: never both', async () => {
    const environment = await start();
    home = environment.home;
    environment.api.setResponder(() => textReply('Fine.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const turn = async (text: string) =>
      runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] })).runId);
    await turn('One.');
    const modeBefore = (await runtime.getSession(sessionId)).permissionMode;
    const [pid] = processesWithEnvironment('HOME', environment.home);
    process.kill(pid!, 'SIGKILL');
    // Sent at once: the agent is dead, and Tether may not have heard yet.
    const [model, mode] = await Promise.all([
      runtime.setModel({ sessionId, model: 'sonnet' }).then(
        () => null,
        (error: unknown) => error,
      ),
      runtime.setPermissionMode({ sessionId, mode: 'auto_edit' }).then(
        () => null,
        (error: unknown) => error,
      ),
    ]);
    // Refused because the agent died, said so (never as the agent's own refusal of the request).
    for (const refused of [model, mode])
      if (refused !== null) expect(refused).toMatchObject({ code: 'provider_crashed' });
    expect(await turn('Two.')).toMatchObject({ outcome: 'succeeded' });
    const sentModel = (turnRequests(environment).at(-1)!.body as { model: string }).model;
    expect(sentModel.includes('sonnet')).toBe(model === null);
    expect((await runtime.getSession(sessionId)).permissionMode).toBe(mode === null ? 'auto_edit' : modeBefore);
  });

  it('fails a run whose process is killed mid-turn with provider_crashed (the same classification on both), then resumes', async () => {
    const environment = await start();
    home = environment.home;
    environment.api.enqueue(textReply('First answer.'), holdReply(), textReply('After the crash.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'One.' }] })).runId);
    const held = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Two.' }] });
    await environment.api.waitForRequests(2, { kind: 'turn' });
    killProcessesWithEnvironment('HOME', environment.home);
    const run = await runtime.waitForRun(held.runId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { signal: 'SIGKILL' } },
    });
    // No SDK or CLI prose: the classifier's own message.
    expect(run.error?.message).toBe(
      'The claude CLI exited before finishing the turn (signal SIGKILL). The next turn starts a new process that resumes the conversation.',
    );
    expect((await sessionSequence(runtime, sessionId)).slice(-2)).toEqual([
      'session.process_stopped:crashed',
      'run.completed:failed:provider_crashed',
    ]);
    const three = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Three.' }] });
    expect(answerText(await runEvents(runtime, sessionId, three.runId))).toBe('After the crash.');
    expect(history(environment, 2)).toContain('One.');
  });

  it('a settings or MCP configuration file the agent refuses fails the turn provider_configuration_refused, not a crash; fixed, the next turn works', async () => {
    const environment = await start();
    home = environment.home;
    environment.api.setResponder(() => textReply('Fine.'));
    const runtime = await environment.runtime();
    const cases = [
      { reason: 'mcp_config_invalid', file: 'mcp.json', key: 'mcpConfigPath', fixed: '{"mcpServers":{}}' },
      { reason: 'settings_file_missing', file: 'settings.json', key: 'settingsPath', fixed: '{}' },
    ] as const;
    for (const { reason, file, key, fixed } of cases) {
      const configurationFile = path.join(environment.workspace, '..', `missing-${file}`);
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
        [key]: configurationFile,
      });
      const turn = async () =>
        runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
      expect(await turn(), reason).toMatchObject({
        outcome: 'failed',
        error: { code: 'provider_configuration_refused', retryable: false, details: { reason } },
      });
      await writeFile(configurationFile, fixed);
      expect(await turn(), reason).toMatchObject({ outcome: 'succeeded' });
    }
  });

  it('a workspace folder gone before the agent starts fails the turn invalid_workspace (not a missing binary); put back, the next turn works', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const away = `${environment.workspace}-away`;
    await rename(environment.workspace, away);
    const failed = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Where am I?' }] });
    const ended = (await runEvents(runtime, sessionId, failed.runId)).at(-1);
    expect(ended).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'invalid_workspace', details: { reason: 'missing' } },
    });
    expect((ended as { error: { message: string } }).error.message).toContain(environment.workspace);
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(0);
    await rename(away, environment.workspace);
    environment.api.enqueue(textReply('Back home.'));
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'And now?' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Back home.');
  });

  it('a workspace folder gone while the agent runs fails the next turn invalid_workspace before it reaches the agent; put back, the next turn works', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(textReply('Here.'), textReply('Back home.'));
    const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Where am I?' }] });
    expect(answerText(await runEvents(runtime, sessionId, first.runId))).toBe('Here.');
    const away = `${environment.workspace}-away`;
    await rename(environment.workspace, away);
    const failed = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Still there?' }] });
    expect((await runEvents(runtime, sessionId, failed.runId)).at(-1)).toMatchObject({
      type: 'run.completed',
      outcome: 'failed',
      error: { code: 'invalid_workspace', details: { reason: 'missing' } },
    });
    // Its tools would have run in a folder that is gone (before: sent, and the turn "succeeded").
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(1);
    await rename(away, environment.workspace);
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'And now?' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('Back home.');
  });

  it('reports a missing binary as provider_unavailable before anything runs', async () => {
    const environment = await start();
    const runtime = await environment.runtime({
      provider: { claudePath: path.join(environment.home, 'missing-claude') },
    });
    const error = await agentErrorOf(
      runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } }),
    );
    expect(error).toMatchObject({
      code: 'provider_unavailable',
      details: { binaryPath: path.join(environment.home, 'missing-claude') },
    });
    expect(await runtime.listSessions()).toHaveLength(0);
  });

  it('refuses bypass as root without IS_SANDBOX at once, at open and at set_permission_mode, with what to do, nothing changed', async () => {
    const environment = await start({ sandbox: false });
    environment.api.setResponder(() => textReply('In ask mode.'));
    const runtime = await environment.runtime();
    const workspace = { kind: 'directory', path: environment.workspace } as const;
    if (process.getuid?.() !== 0) {
      // Only root is refused bypass (tests/fake-cli/start-up-guards.test.ts plays the CLI's refusal as any user).
      expect((await runtime.openSession({ workspace, permissionMode: 'bypass' })).sessionId).toMatch(/^ses_/);
      return;
    }
    const opened = await agentErrorOf(runtime.openSession({ workspace, permissionMode: 'bypass' }));
    expect(opened).toMatchObject({ code: 'provider_configuration_refused', details: { reason: 'bypass_root' } });
    expect(opened.message).toContain('IS_SANDBOX=1');
    expect(await runtime.listSessions()).toHaveLength(0);
    const { sessionId } = await runtime.openSession({ workspace });
    const changed = await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'bypass', restart: true }));
    expect(changed).toMatchObject({ code: 'provider_configuration_refused', details: { reason: 'bypass_root' } });
    expect((await runtime.getSession(sessionId)).permissionMode).not.toBe('bypass');
    // The session goes on in its mode.
    const next = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(answerText(await runEvents(runtime, sessionId, next.runId))).toBe('In ask mode.');
  });

  it('fails at once with auth_required when the agent has no credentials at all', async () => {
    const environment = await start();
    const { ANTHROPIC_API_KEY: _key, ...withoutKey } = environment.environment;
    const runtime = await createAgentRuntime({
      providers: [createClaudeProvider({ transport, claudePath: environment.claudePath, environment: withoutKey })],
    });
    try {
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
      });
      const run = await runtime.waitForRun(
        (await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId,
      );
      expect(run).toMatchObject({ outcome: 'failed', error: { code: 'auth_required' } });
      expect(run.error?.message).toContain('ANTHROPIC_API_KEY');
      expect(environment.api.requests).toHaveLength(0);
    } finally {
      await runtime.shutdown();
    }
  });
});
