import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';
import type { AgentRuntime, AgentRuntimeOptions } from './runtime-types.js';

/**
 * A fresh workspace directory per test and the runtime the test starts, shut down and removed after
 * it; call at the top of a test file.
 */
export function runtimePerTest(prefix: string) {
  let workspace = '';
  let runtime: AgentRuntime | undefined;
  beforeEach(async () => {
    workspace = await mkdtemp(path.join(os.tmpdir(), prefix));
  });
  afterEach(async () => {
    await runtime?.shutdown();
    runtime = undefined;
    await rm(workspace, { recursive: true, force: true });
  });
  return {
    get workspace() {
      return workspace;
    },
    /** A runtime with `options`, shut down after the test (unless the test shut it down first). */
    async start(options: AgentRuntimeOptions): Promise<AgentRuntime> {
      runtime = await createAgentRuntime(options);
      return runtime;
    },
  };
}
