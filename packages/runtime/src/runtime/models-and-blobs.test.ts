import { createHash } from 'node:crypto';
import { AgentError, type ModelList } from '@tether/protocol';
import { agentErrorOf, createMockProvider, pngBytes } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const harness = runtimePerTest('tether-models-blobs-');

function modelList(provider: string): ModelList {
  return {
    provider,
    agentVersion: '2.1.332',
    models: [
      {
        id: 'sonnet',
        displayName: 'Sonnet',
        description: 'Everyday work',
        resolvedModel: 'claude-sonnet-5-5',
        effortLevels: ['low', 'high'],
        supportsFastMode: false,
        supportsAdaptiveThinking: true,
        supportsAutoMode: true,
      },
    ],
  };
}

describe('runtime.listModels', () => {
  it("answers the named provider's list, and the default provider's when none is named", async () => {
    const runtime = await harness.start({
      providers: [
        createMockProvider({ name: 'first', capabilities: { modelList: true }, listModels: () => modelList('first') }),
        createMockProvider({
          name: 'second',
          capabilities: { modelList: true },
          listModels: () => modelList('second'),
        }),
      ],
      defaultProvider: 'second',
    });
    expect(await runtime.listModels('first')).toEqual(modelList('first'));
    expect(await runtime.listModels()).toEqual(modelList('second'));
  });

  it('refuses a provider without a model list with capability_unsupported, and an unknown one with invalid_command', async () => {
    const runtime = await harness.start({
      providers: [
        createMockProvider({ name: 'plain' }),
        // Declares no list even though it could answer: the capability decides.
        createMockProvider({ name: 'undeclared', listModels: () => modelList('undeclared') }),
      ],
    });
    for (const name of ['plain', 'undeclared']) {
      expect(await agentErrorOf(runtime.listModels(name))).toMatchObject({
        code: 'capability_unsupported',
        details: { reason: 'model_list' },
      });
    }
    const unknown = await agentErrorOf(runtime.listModels('nobody'));
    expect(unknown).toMatchObject({ code: 'invalid_command', details: { reason: 'unknown_provider' } });
    expect(unknown.message).toContain('plain, undeclared');
  });

  it("passes on the provider's own failure", async () => {
    const runtime = await harness.start({
      providers: [
        createMockProvider({
          capabilities: { modelList: true },
          listModels: () => {
            throw new AgentError({ code: 'provider_unavailable', message: 'The agent did not answer.' });
          },
        }),
      ],
    });
    expect(await agentErrorOf(runtime.listModels())).toMatchObject({
      code: 'provider_unavailable',
      message: 'The agent did not answer.',
    });
  });

  it('once shutting down began: a read in flight that the shutdown ended, and a new request, are runtime_stopped', async () => {
    let failRead: (error: Error) => void = () => undefined;
    const asked: string[] = [];
    const runtime = await harness.start({
      providers: [
        createMockProvider({
          capabilities: { modelList: true },
          listModels: () => {
            asked.push('list');
            return new Promise<ModelList>((_resolve, reject) => {
              failRead = reject;
            });
          },
        }),
      ],
    });
    const inFlight = agentErrorOf(runtime.listModels());
    const stopping = runtime.shutdown();
    // What a provider's disposal makes of a read it ends: its agent stopped before it answered.
    failRead(new AgentError({ code: 'provider_unavailable', message: 'It exited before it answered.' }));
    expect(await inFlight).toMatchObject({ code: 'runtime_stopped' });
    await stopping;
    expect(await agentErrorOf(runtime.listModels())).toMatchObject({ code: 'runtime_stopped' });
    expect(asked).toEqual(['list']);
  });
});

describe("a conversation's images", () => {
  it('are counted against what one request may hold: the agent sends every earlier image again with each request', async () => {
    const runtime = await harness.start({
      providers: [createMockProvider({ capabilities: { images: true, inputParts: ['text', 'image'] } })],
    });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: harness.workspace } });
    const image = {
      type: 'image' as const,
      mediaType: 'image/png' as const,
      data: Buffer.from(pngBytes(3, 2)).toString('base64'),
    };
    const sixty = Array.from({ length: 60 }, () => image);
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: sixty })).runId);
    const refused = await agentErrorOf(runtime.submitTurn({ sessionId, input: sixty }));
    expect(refused).toMatchObject({ code: 'invalid_command', details: { reason: 'too_many_images' } });
    expect(refused.message).toContain('already carries 60 images');
    // Forty more fit: 100 in all.
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: sixty.slice(0, 40) })).runId);
  });
});

describe('runtime.readBlob', () => {
  it("reads an image a session's turn carried, for that session only, and forgets it with the session", async () => {
    const runtime = await harness.start({
      providers: [createMockProvider({ capabilities: { images: true, inputParts: ['text', 'image'] } })],
    });
    const workspace = { kind: 'directory' as const, path: harness.workspace };
    const { sessionId } = await runtime.openSession({ workspace });
    const other = await runtime.openSession({ workspace });
    const png = pngBytes(3, 2);
    const hash = createHash('sha256').update(png).digest('hex');
    const { runId } = await runtime.submitTurn({
      sessionId,
      input: [{ type: 'image', mediaType: 'image/png', data: Buffer.from(png).toString('base64') }],
    });
    await runtime.waitForRun(runId);

    expect(await runtime.readBlob(sessionId, hash)).toEqual({ mediaType: 'image/png', bytes: png });
    for (const [session, sha256] of [
      [other.sessionId, hash],
      [sessionId, 'f'.repeat(64)],
      [sessionId, hash.toUpperCase()],
      [sessionId, '../etc/passwd'],
    ] as const) {
      expect(await agentErrorOf(runtime.readBlob(session, sha256))).toMatchObject({ code: 'blob_not_found' });
    }
    await runtime.closeSession({ sessionId });
    await runtime.deleteSession(sessionId);
    expect((await agentErrorOf(runtime.readBlob(sessionId, hash))).code).toBe('blob_not_found');
  });
});
