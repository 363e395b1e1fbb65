import { createTetherClient } from '@tether/client';
import { holdReply } from '@tether/fake-anthropic-api';
import type { ModelList } from '@tether/protocol';
import { processesWithEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { daemonPerTest, openSession } from './daemon-test-helpers.js';

const { start } = daemonPerTest();

async function errorOf(response: Response) {
  const body = (await response.json()) as { error: { code: string; details?: { reason?: string } } };
  return { status: response.status, code: body.error.code, reason: body.error.details?.reason };
}

describe("the agent's model list through the API (the real binary)", () => {
  it('answers the list GET /v1/providers/claude/models, the client reads it, an unknown provider is 404', async () => {
    const { daemon, api } = await start();
    const response = await api.request('GET', '/v1/providers/claude/models');
    expect(response.status).toBe(200);
    const list = (await response.json()) as ModelList;
    expect(list.provider).toBe('claude');
    expect(list.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(list.models.length).toBeGreaterThan(0);
    for (const model of list.models) expect(model.id.length).toBeGreaterThan(0);
    expect(list.models.map((model) => model.id)).toContain('default');

    const tether = createTetherClient({ url: daemon.url, token: daemon.token });
    expect(await tether.listModels()).toEqual(list);
    expect(await tether.listModels('claude')).toEqual(list);

    expect(await errorOf(await api.request('GET', '/v1/providers/nope/models'))).toEqual({
      status: 404,
      code: 'route_not_found',
      reason: 'unknown_provider',
    });
    expect((await fetch(`${daemon.url}/v1/providers/claude/models`)).status).toBe(401);
  });

  it('refuses the list while the daemon drains (503 runtime_stopped, in its words), starting no agent for it', async () => {
    const { environment, daemon, api } = await start({ shutdownGraceMs: 60_000 });
    const sessionId = await openSession(api, environment.workspace);
    environment.api.enqueue(holdReply());
    await api.command({ type: 'submit_turn', sessionId, input: [{ type: 'text', text: 'Hold on.' }] });
    await environment.api.waitForRequests(1, { kind: 'turn' });
    const agentsBefore = processesWithEnvironment('HOME', environment.home);

    // The held run keeps the daemon draining for the whole grace: the runtime has not stopped yet.
    const closing = daemon.close();
    const response = await api.request('GET', '/v1/providers/claude/models');
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toEqual({
      code: 'runtime_stopped',
      message: 'The daemon is shutting down and starts no new work. Retry once it is running again.',
      retryable: true,
    });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual(agentsBefore);
    await daemon.close({ force: true });
    await closing;
  });
});
