import { createMockProvider } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

const harness = runtimePerTest('tether-provider-preparation-');

describe("a provider's preparation", () => {
  it('is awaited while the runtime starts: the runtime is ready only once its providers are', async () => {
    let finishPreparing!: () => void;
    const steps: string[] = [];
    const provider = Object.assign(createMockProvider(), {
      doPrepare: () =>
        new Promise<void>((resolve) => {
          steps.push('prepare called');
          finishPreparing = () => {
            steps.push('prepared');
            resolve();
          };
        }),
    });
    const starting = harness.start({ providers: [provider] }).then((runtime) => {
      steps.push('runtime ready');
      return runtime;
    });
    await expect.poll(() => steps).toEqual(['prepare called']);
    finishPreparing();
    const runtime = await starting;
    expect(steps).toEqual(['prepare called', 'prepared', 'runtime ready']);
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: harness.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
  });

  it('that fails does not keep the runtime from starting or its sessions from running', async () => {
    const provider = Object.assign(createMockProvider(), {
      doPrepare: () => Promise.reject(new Error('The connection could not be made.')),
    });
    const runtime = await harness.start({ providers: [provider] });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: harness.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go.' }] });
    expect((await runtime.waitForRun(runId)).outcome).toBe('succeeded');
  });
});
