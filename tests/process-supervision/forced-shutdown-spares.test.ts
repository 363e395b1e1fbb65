import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pollFor, readProcessCommandLine } from '@tether/provider-claude/test-support';
import { processesWithEnvironment } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from '../conformance/conformance-harness.js';

// A forced shutdown (a second SIGTERM, a host that must exit now) ends a hung warm spare at once:
// SIGKILL to its group, never the graceful EOF-then-SIGTERM path a stopped process cannot take part in.

describeTransports('a forced shutdown with a hung warm spare', ({ start }) => {
  it('SIGKILLs the SIGSTOPped spare at once (no EOF-and-SIGTERM grace) and leaves nothing of it', async () => {
    const environment = await start();
    // The spare's process is a shell that notes each SIGTERM its group gets and runs the real claude
    // beside it (its stdin kept: an asynchronous command's is /dev/null otherwise).
    const sigterms = path.join(environment.home, 'spare-sigterms');
    const noting = path.join(environment.home, 'spare-noting-sigterm.sh');
    writeFileSync(
      noting,
      `#!/bin/sh\ncase " $* " in *" --await-claim "*) trap 'echo TERM >> "${sigterms}"' TERM; "${environment.claudePath}" "$@" <&0 & wait $!; exit 0;; esac\nexec "${environment.claudePath}" "$@"\n`,
    );
    chmodSync(noting, 0o755);
    const runtime = await environment.runtime({ provider: { claudePath: noting, warmPool: { spares: 1 } } });
    await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const spare = await pollFor(() =>
      processesWithEnvironment('HOME', environment.home).find((pid) => {
        const argv = readProcessCommandLine(pid);
        return argv?.[0] === environment.claudePath && argv.includes('--await-claim');
      }),
    );
    // Hung: alive, reading nothing, answering nothing.
    process.kill(spare, 'SIGSTOP');
    await runtime.shutdown({ force: true });
    // Nothing of the test's HOME is left the moment shutdown returns, and no SIGTERM was ever sent.
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    expect(existsSync(sigterms)).toBe(false);
  });
});
