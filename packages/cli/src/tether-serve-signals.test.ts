import { existsSync } from 'node:fs';
import path from 'node:path';
import { createTetherClient } from '@tether/client';
import { holdReply } from '@tether/fake-anthropic-api';
import { pollFor } from '@tether/provider-claude/test-support';
import { processesWithEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { spawnTether } from './test-support/spawn-tether.js';
import { storedRunEnds } from './test-support/stored-records.js';

const fixture = useCommandFixture('tether-serve-signals-');
const served = useTetherServe(fixture);

/** `tether serve EXTRA` with a session whose turn the fake model holds open; resolves once it is held. */
async function daemonWithHeldTurn(extra: readonly string[]) {
  const url = await served.serve(['--no-web', ...extra]);
  const token = (
    await spawnTether(['token'], { cwd: fixture.workspace, environment: fixture.environment }).finished
  ).stdout.trim();
  const client = createTetherClient({ url, token });
  const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
  fixture.api.enqueue(holdReply());
  await client.submitTurn({ sessionId, input: [{ type: 'text', text: 'Take your time.' }] });
  await fixture.api.waitForRequests(1, { kind: 'turn' });
  await pollFor(() => (fixture.api.heldCount === 1 ? true : undefined));
  const child = served.child!;
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { sessionId, child, exited };
}

const dataDir = () => fixture.environment.TETHER_HOME!;
/** Every process started with the fixture's HOME: the daemon and its agents. */
const processesLeft = () => processesWithEnvironment('HOME', fixture.environment.HOME!);

describe('tether serve and terminating signals', () => {
  it('a second signal during the grace stops everything at once: the agents ended, the run recorded as stopped, daemon.json gone', async () => {
    const { sessionId, child, exited } = await daemonWithHeldTurn(['--shutdown-grace', '600']);
    expect(processesLeft().length).toBeGreaterThan(1);
    child.kill('SIGTERM');
    await pollFor(() => (served.output().includes('waiting for active runs to finish') ? true : undefined));
    child.kill('SIGINT');

    expect(await exited).toBe(0);
    expect(served.output()).toContain('■ second signal: stopping now');
    expect(processesLeft()).toEqual([]);
    expect(existsSync(path.join(dataDir(), 'daemon.json'))).toBe(false);
    // Ended before the agent could end the turn itself: its end says the unfinished answer is not the agent's.
    expect(await storedRunEnds(dataDir(), sessionId)).toEqual([
      { outcome: 'interrupted', errorCode: 'runtime_stopped', reason: 'cut_off' },
    ]);
  });

  it('past --shutdown-grace a turn still going is interrupted, its end saying the daemon stopped it', async () => {
    const { sessionId, child, exited } = await daemonWithHeldTurn(['--shutdown-grace', '0']);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(processesLeft()).toEqual([]);
    // Stopped by the agent, as the shutdown's interrupt asked: no cut_off.
    expect(await storedRunEnds(dataDir(), sessionId)).toEqual([
      { outcome: 'interrupted', errorCode: 'runtime_stopped', reason: null },
    ]);
  });

  it('refuses a --shutdown-grace that is not a number of seconds from 0 to 3600', async () => {
    const refused = await spawnTether(['serve', '--shutdown-grace', 'soon'], {
      cwd: fixture.workspace,
      environment: fixture.environment,
    }).finished;
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      '--shutdown-grace takes a number of seconds from 0 to 3600 (e.g. 10), not "soon".',
    );
  });
});
