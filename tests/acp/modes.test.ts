import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { methods, type RequestPermissionRequest } from '@tether/acp/test-support';
import { describe, expect, it, vi } from 'vitest';
import { useAcp } from './acp-harness.js';

describe('ACP modes and config options against the real binary', () => {
  const startAcp = useAcp();

  it("set_mode enters plan mode; approving the plan's exit moves the agent on, and the client hears of it", async () => {
    const asked: RequestPermissionRequest[] = [];
    const started = await startAcp({
      onPermission: (request) => {
        asked.push(request);
        return { outcome: { outcome: 'selected', optionId: 'plan_accept_edits' } };
      },
    });
    const { environment, runtime, pair } = started;
    const sessionId = await pair.newSession(environment.workspace);
    await pair.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'plan' });
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('plan');
    // As a model does in plan mode: write the plan to the file the CLI names in its system prompt, then ask to exit.
    const plan = '# The plan\n\n1. Change the thing\n';
    environment.api.setResponder((view) => {
      const planFile =
        /[^"\\ ]*\.claude\/plans\/[^"\\ ]*\.md/.exec(JSON.stringify(view.body))?.[0] ?? 'no plan file named';
      environment.api.setResponder(() => {
        environment.api.setResponder(() => textReply('Proceeding.'));
        return toolUseReply('ExitPlanMode', {});
      });
      return toolUseReply('Write', { file_path: planFile, content: plan });
    });
    const response = await pair.prompt(sessionId, 'Plan it.');
    expect(response.stopReason).toBe('end_turn');
    expect(asked).toHaveLength(1);
    expect(asked[0]!.toolCall).toMatchObject({ kind: 'switch_mode', content: [{ content: { text: plan } }] });
    expect(pair.updatesOf(sessionId, 'current_mode_update').map((update) => update.currentModeId)).toEqual([
      'plan',
      'auto_edit',
    ]);
    const configUpdates = pair.updatesOf(sessionId, 'config_option_update');
    expect(configUpdates.at(-1)?.configOptions.find((option) => option.id === 'mode')).toMatchObject({
      currentValue: 'auto_edit',
    });
  });

  it('a model id the list lacks is taken (Claude Code accepts any), and the model option reports it as the current value', async () => {
    const { environment, runtime, pair } = await startAcp();
    const sessionId = await pair.newSession(environment.workspace);
    // The list the option is built from (read once per process, shared with the agent's own read) lacks the id.
    expect((await runtime.listModels()).models.map((model) => model.id)).not.toContain('gpt-17');
    const { configOptions } = await pair.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'model',
      value: 'gpt-17',
    });
    expect(configOptions.find((option) => option.id === 'model')).toMatchObject({
      currentValue: 'gpt-17',
      options: expect.arrayContaining([
        { value: 'gpt-17', name: 'gpt-17' },
        expect.objectContaining({ value: 'default' }),
      ]),
    });
    environment.api.enqueue(textReply('Answered.'));
    await pair.prompt(sessionId, 'Hi.');
    expect(environment.api.requests.find((request) => request.kind === 'turn')?.body).toMatchObject({
      model: 'gpt-17',
    });

    // "opus" and "default" resolve to one model: the option shows the one chosen, not the first of them.
    const modelUpdates = () =>
      pair
        .updatesOf(sessionId, 'config_option_update')
        .map((update) => update.configOptions.find((option) => option.id === 'model')?.currentValue);
    const updatesBefore = modelUpdates().length;
    const chosen = await pair.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: 'model',
      value: 'opus',
    });
    const models = (await runtime.listModels()).models;
    const opus = models.find((model) => model.id === 'opus')!.resolvedModel;
    expect(models.find((model) => model.id === 'default')?.resolvedModel).toBe(opus);
    expect(chosen.configOptions.find((option) => option.id === 'model')).toMatchObject({ currentValue: 'opus' });
    // The update the change sets off says so too, whether it goes out before the answer or after it.
    await vi.waitFor(() => expect(modelUpdates().length).toBeGreaterThan(updatesBefore), { timeout: 10_000 });
    expect(modelUpdates().slice(updatesBefore)).toEqual(['opus']);
    // Back to default by /model: the same model, so no change of the session's tells it; the prompt does.
    await pair.prompt(sessionId, '/model default');
    expect(modelUpdates().at(-1)).toBe('default');
    environment.api.enqueue(textReply('Answered again.'));
    await pair.prompt(sessionId, 'And now?');
    expect(environment.api.requests.filter((request) => request.kind === 'turn').at(-1)?.body).toMatchObject({
      model: opus,
    });
  });

  it('/model NAME typed as a prompt sets the model option: the client hears of it at once, the next turn uses it', async () => {
    const { environment, pair } = await startAcp();
    const sessionId = await pair.newSession(environment.workspace);
    const response = await pair.prompt(sessionId, '/model gpt-17');
    expect(response.stopReason).toBe('end_turn');
    await vi.waitFor(
      () =>
        expect(
          pair
            .updatesOf(sessionId, 'config_option_update')
            .at(-1)
            ?.configOptions.find((option) => option.id === 'model'),
        ).toMatchObject({ currentValue: 'gpt-17' }),
      { timeout: 10_000 },
    );
    expect(
      pair.updatesOf(sessionId, 'agent_message_chunk').map((update) => (update.content as { text: string }).text),
    ).toEqual(['Model set to gpt-17.']);
    expect(environment.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(0);
    environment.api.enqueue(textReply('Answered.'));
    await pair.prompt(sessionId, 'Hi.');
    expect(environment.api.requests.find((request) => request.kind === 'turn')?.body).toMatchObject({
      model: 'gpt-17',
    });
  });

  it('an unknown mode or config option is refused with what to use', async () => {
    const started = await startAcp();
    const { environment, pair } = started;
    const sessionId = await pair.newSession(environment.workspace);
    await expect(
      pair.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'yolo' }),
    ).rejects.toMatchObject({
      code: -32602,
      data: { code: 'invalid_command' },
    });
    await expect(
      pair.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: 'colour', value: 'blue' }),
    ).rejects.toMatchObject({
      code: -32602,
      message: 'Unknown config option "colour"; use mode or model.',
      data: { code: 'invalid_command' },
    });
    // A boolean option's value (ACP's other option type): none of Tether's options takes one.
    await expect(
      pair.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: 'mode',
        type: 'boolean',
        value: true,
      }),
    ).rejects.toMatchObject({ code: -32602, data: { code: 'invalid_command' } });
    expect((await started.runtime.getSession(sessionId)).configuration.permissionMode).toBeUndefined();
  });

  it('set_mode, set_config_option and session/close, as a prompt, only for a session made, loaded or resumed on this connection', async () => {
    const started = await startAcp();
    const { environment, runtime, pair } = started;
    // A session of another host (the CLI, the web UI) on the same runtime, never loaded here.
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    for (const request of [
      pair.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'bypass' }),
      pair.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: 'model', value: 'sonnet' }),
    ]) {
      await expect(request).rejects.toMatchObject({
        code: -32002,
        message: expect.stringContaining('Load it with session/load'),
      });
    }
    // session/close too is refused -32002 on the wire (seen from a raw client; the SDK's client here
    // resolves the refused close with {}): the session stays open.
    await pair.agent.request(methods.agent.session.close, { sessionId }).catch(() => undefined);
    const untouched = await runtime.getSession(sessionId);
    expect(untouched.state).not.toBe('closed');
    expect(untouched.configuration.permissionMode).toBeUndefined();
    expect(untouched.configuration.model).toBeUndefined();
  });
});
