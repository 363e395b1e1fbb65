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

  it('answers session/new without waiting for the list, then announces the model option once it arrives', async () => {
    const { environment, pair, held, asked } = await startWithHeldModelList();
    // Asked at initialize, before any session.
    expect(asked()).toBe(1);
    const first = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    expect(first.configOptions?.map((option) => option.id)).toEqual(['mode']);
    expect(pair.updatesOf(first.sessionId, 'config_option_update')).toEqual([]);

    held.resolve(modelList);
    await vi.waitFor(() => expect(pair.updatesOf(first.sessionId, 'config_option_update')).toHaveLength(1));
    const announced = pair.updatesOf(first.sessionId, 'config_option_update')[0]!.configOptions;
    expect(announced.map((option) => option.id)).toEqual(['mode', 'model']);
    expect(announced[1]).toMatchObject({ category: 'model', currentValue: 'sonnet', options: [{ value: 'sonnet' }] });

    // Known now: the next session is answered with it, and nothing is announced for it.
    const second = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    expect(second.configOptions?.map((option) => option.id)).toEqual(['mode', 'model']);
    await pair.close();
    expect(pair.updatesOf(second.sessionId, 'config_option_update')).toEqual([]);
    expect(pair.updatesOf(first.sessionId, 'config_option_update')).toHaveLength(1);
    expect(asked()).toBe(1);
  });

  it('a list that fails leaves the model as free text: no option, nothing announced, a log line', async () => {
    const { environment, pair, held } = await startWithHeldModelList();
    const { sessionId, configOptions } = await pair.agent.request(methods.agent.session.new, {
      cwd: environment.workspace,
      mcpServers: [],
    });
    expect(configOptions?.map((option) => option.id)).toEqual(['mode']);
    held.reject(new AgentError({ code: 'provider_unavailable', message: 'Could not read the model list.' }));
    await vi.waitFor(() => expect(pair.logs.some((line) => line.startsWith('model list unavailable'))).toBe(true));
    const next = await pair.agent.request(methods.agent.session.new, { cwd: environment.workspace, mcpServers: [] });
    expect(next.configOptions?.map((option) => option.id)).toEqual(['mode']);
    await pair.close();
    expect(pair.updatesOf(sessionId, 'config_option_update')).toEqual([]);
  });
});
