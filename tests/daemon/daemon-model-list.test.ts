import { createTetherClient } from '@tether/client';
import type { ModelList } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { daemonPerTest } from './daemon-test-helpers.js';

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
});
