import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { processesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from '../conformance/conformance-harness.js';

// Warm spares when claude cannot start at all: every turn fails with a stable code, and the pool
// does not keep starting spares that die (no spawn storm), nor leave any process behind.

describeTransports('warm spares for a claude that fails at start', ({ start }) => {
  it('every turn fails provider_crashed; a bounded number of starts per session; nothing is left', async () => {
    const environment = await start();
    const starts = path.join(environment.home, 'starts.log');
    // The version check passes (spares exist only for a binary that passed it); every agent start fails at once.
    const failing = path.join(environment.home, 'failing-claude.sh');
    writeFileSync(
      failing,
      `#!/bin/sh\ncase "$1" in --version) exec "${environment.claudePath}" "$@";; esac\necho started >> "${starts}"\nexit 1\n`,
    );
    chmodSync(failing, 0o755);
    const runtime = await environment.runtime({ provider: { claudePath: failing, warmPool: { spares: 1 } } });
    const sessions = 3;
    for (let index = 0; index < sessions; index += 1) {
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: environment.workspace },
      });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
      expect(await runtime.waitForRun(runId)).toMatchObject({
        outcome: 'failed',
        error: { code: 'provider_crashed', details: { exitCode: 1 } },
      });
    }
    await runtime.shutdown();
    // Per session: its spare, the turn's own start, and that turn sent once more to a new process.
    const count = readFileSync(starts, 'utf8').split('\n').filter(Boolean).length;
    expect(count).toBeLessThanOrEqual(3 * sessions);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
