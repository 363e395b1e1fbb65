import { textReply } from '@tether/fake-anthropic-api';
import { methods } from '@tether/acp/test-support';
import { AgentError, type ModelDescription, type ModelList } from '@tether/protocol';
import { createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectClient, runtimeHost } from './acp-harness.js';

const sonnet: ModelDescription = {
  id: 'sonnet',
  displayName: 'Sonnet',
  description: 'Everyday tasks',
  resolvedModel: 'claude-sonnet-5',
  effortLevels: [],
  supportsFastMode: false,
  supportsAdaptiveThinking: false,
  supportsAutoMode: false,
};
const modelList: ModelList = { provider: 'claude', agentVersion: '2.1.332', models: [sonnet] };

describe('ACP model option while the model list is being read', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** An initialized client over a runtime whose model list arrives only when the test settles it. */
  async function startWithHeldModelList() {
    const environment = await createClaudeTestEnvironment();
    cleanups.push(() => environment.cleanup());
    const runtime = await environment.runtime();
    const held = {} as { resolve(list: ModelList): void; reject(error: unknown): void; promise: Promise<ModelList> };
    held.promise = new Promise<ModelList>((resolve, reject) => Object.assign(held, { resolve, reject }));
    let asked = 0;
    const host = new Proxy(runtimeHost(runtime), {
      get(target, key) {
        if (key !== 'listModels') return Reflect.get(target, key);
        return () => {
          asked += 1;
          return held.promise;
        };
      },
    });
    const pair = await connectClient(host);
    // Closed once more after a test that closed it itself: the second close has nothing left to do.
    cleanups.push(() => pair.close().catch(() => {}));
    return { environment, pair, held, asked: () => asked };
  }

  it('answers session/new without waiting for the list, with the model in effect, then announces the whole list once it arrives', async () => {
    const { environment, pair, held, asked } = await startWithHeldModelList();
    // Not at initialize: no agent runs yet, and one would start only to list the models.
    expect(asked()).toBe(0);
    const first = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    // Once the session's agent started: asked of it.
    await vi.waitFor(() => expect(asked()).toBe(1));
    // Model support is advertised at once (what acpx --model needs): the default, the only model known yet.
    expect(first.configOptions?.map((option) => option.id)).toEqual(['mode', 'model']);
    expect(first.configOptions?.[1]).toMatchObject({
      category: 'model',
      currentValue: 'default',
      options: [{ value: 'default' }],
    });
    expect(pair.updatesOf(first.sessionId, 'config_option_update')).toEqual([]);

    held.resolve(modelList);
    await vi.waitFor(() => expect(pair.updatesOf(first.sessionId, 'config_option_update')).toHaveLength(1));
    const announced = pair.updatesOf(first.sessionId, 'config_option_update')[0]!.configOptions;
    expect(announced.map((option) => option.id)).toEqual(['mode', 'model']);
    // The list lacks "default": the model in effect stays among the choices, as the current one.
    expect(announced[1]).toMatchObject({
      category: 'model',
      currentValue: 'default',
      options: [{ value: 'sonnet' }, { value: 'default' }],
    });

    // Known now: the next session is answered with it, and nothing is announced for it.
    const second = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    expect(second.configOptions?.[1]).toMatchObject({ options: [{ value: 'sonnet' }, { value: 'default' }] });
    await pair.close();
    expect(pair.updatesOf(second.sessionId, 'config_option_update')).toEqual([]);
    expect(pair.updatesOf(first.sessionId, 'config_option_update')).toHaveLength(1);
    expect(asked()).toBe(1);
  });

  it("session/new opens the session on the model its _meta asks for (Claude's ACP adapter's convention, acpx's --model), and says so before the list arrives", async () => {
    const { environment, pair, held } = await startWithHeldModelList();
    const { sessionId, configOptions } = await pair.agent.request(methods.agent.session.new, {
      cwd: environment.workspace,
      mcpServers: [],
      _meta: { claudeCode: { options: { model: 'sonnet' } } },
    });
    expect(configOptions?.[1]).toMatchObject({
      currentValue: 'sonnet',
      options: [{ value: 'default' }, { value: 'sonnet', name: 'sonnet' }],
    });
    environment.api.enqueue(textReply('Hi.'));
    await pair.prompt(sessionId, 'Hi.');
    // The alias reached the agent: Claude Code asked the API for the model it stands for.
    expect(environment.api.requests.find((request) => request.kind === 'turn')?.body).toMatchObject({
      model: expect.stringMatching(/sonnet/),
    });
    held.resolve(modelList);
    // After the agent's own reports of its model: the list's entry, still the model asked for.
    await vi.waitFor(() =>
      expect(pair.updatesOf(sessionId, 'config_option_update').at(-1)?.configOptions[1]).toMatchObject({
        currentValue: 'sonnet',
        options: [{ value: 'sonnet', name: 'Sonnet' }],
      }),
    );
  });

  it('a list that fails leaves the option with what is known: the model in effect and the default, nothing announced, a log line', async () => {
    const { environment, pair, held, asked } = await startWithHeldModelList();
    const { sessionId, configOptions } = await pair.agent.request(methods.agent.session.new, {
      cwd: environment.workspace,
      mcpServers: [],
    });
    expect(configOptions?.[1]).toMatchObject({ currentValue: 'default', options: [{ value: 'default' }] });
    await vi.waitFor(() => expect(asked()).toBe(1));
    held.reject(new AgentError({ code: 'provider_unavailable', message: 'Could not read the model list.' }));
    await vi.waitFor(() => expect(pair.logs.some((line) => line.startsWith('model list unavailable'))).toBe(true));
    const next = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    expect(next.configOptions?.[1]).toMatchObject({ currentValue: 'default', options: [{ value: 'default' }] });
    await pair.close();
    expect(pair.updatesOf(sessionId, 'config_option_update')).toEqual([]);
  });
});
