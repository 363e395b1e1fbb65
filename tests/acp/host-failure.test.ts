import { holdReply } from '@tether/fake-anthropic-api';
import { AgentError, type ProtocolEvent, type SubscribeOptions } from '@tether/protocol';
import { createClaudeTestEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { connectClient, runtimeHost } from './acp-harness.js';

describe('ACP when the host fails under a prompt', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('a lost event stream (a daemon gone) answers the prompt with its error, and refuses the next prompt before it runs', async () => {
    const environment = await createClaudeTestEnvironment();
    cleanups.push(() => environment.cleanup());
    const runtime = await environment.runtime();
    const host = runtimeHost(runtime);
    const lost = new AgentError({
      code: 'runtime_stopped',
      message: 'The daemon went away; start it again and retry.',
    });
    // The host's stream of a session ends with an error once the run has started, as a dropped daemon connection does.
    const failing = new Proxy(host, {
      get(target, key) {
        if (key !== 'subscribe') return Reflect.get(target, key);
        return async function* (sessionId: string, options?: SubscribeOptions): AsyncGenerator<ProtocolEvent> {
          for await (const event of target.subscribe(sessionId, options)) {
            yield event;
            if (event.type === 'run.started') throw lost;
          }
        };
      },
    });
    const pair = await connectClient(failing);
    cleanups.push(() => pair.close());
    environment.api.enqueue(holdReply());
    const sessionId = await pair.newSession(environment.workspace);
    await expect(pair.prompt(sessionId, 'One.')).rejects.toMatchObject({
      code: -32603,
      data: { code: 'runtime_stopped', message: lost.message },
    });
    const runs = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'run.started').length;
    await expect(pair.prompt(sessionId, 'Two.')).rejects.toMatchObject({ data: { code: 'runtime_stopped' } });
    expect((await runtime.readEvents(sessionId)).filter((event) => event.type === 'run.started')).toHaveLength(runs);
    expect(pair.logs.some((line) => line.startsWith('session follow failed') && line.includes('runtime_stopped'))).toBe(
      true,
    );
  });
});
