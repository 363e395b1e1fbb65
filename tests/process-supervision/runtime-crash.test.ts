import path from 'node:path';
import { holdReply, toolUseReply } from '@tether/fake-anthropic-api';
import { reapOrphans } from '@tether/provider-claude';
import type { ClaudeTestEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { spawnTetherRun } from './spawn-tether-run.js';
import { isAlive, pollUntil, readProcessStatus } from '@tether/provider-claude/test-support';
import {
  claudeProcesses,
  detachingCommand,
  expectNothingLeft,
  killExitWatchOf,
  markerOf,
  waitForToolProcesses,
  sandboxPerTest,
} from './supervision-helpers.js';

const sandbox = sandboxPerTest();

/**
 * `tether run` is SIGKILLed, its exit watch with it, while its claude works on a held turn after a
 * tool backgrounded processes: what it leaves is what reapOrphans gets records for on the next start.
 */
async function crashTether(
  environment: ClaudeTestEnvironment,
): Promise<{ pid: number; startTime: number; marker: string }> {
  environment.api.enqueue(
    toolUseReply('Bash', { command: detachingCommand, description: 'Start background work' }),
    holdReply(),
  );
  const tether = spawnTetherRun(
    environment,
    path.join(environment.home, 'tether-data'),
    ['--permission-mode', 'bypass', 'Start it.'],
    ['ignore', 'ignore', 'ignore'],
  );
  // The second request is the one after the tool's result: the tool has run.
  await environment.api.waitForRequests(2, { kind: 'turn' });
  await waitForToolProcesses(environment, 3);
  const [claude] = claudeProcesses(environment);
  // What a runtime records right after spawn (ClaudeProcess.pid, .startTime, .marker).
  const record = { pid: claude!, startTime: readProcessStatus(claude!)!.startTime, marker: markerOf(claude!)! };
  // Killed with its exit watch (as with its whole cgroup), or the watch would end what reapOrphans is for.
  await killExitWatchOf(tether.pid!);
  tether.kill('SIGKILL');
  await new Promise((resolve) => tether.once('close', resolve));
  return record;
}

describe.runIf(process.platform === 'linux')('after Tether itself crashed', () => {
  it('reapOrphans ends the still-running claude and everything its tools left', async () => {
    const environment = await sandbox();
    const record = await crashTether(environment);
    expect(isAlive(record.pid)).toBe(true);
    const tools = await waitForToolProcesses(environment, 3);
    const { reaped } = await reapOrphans([record]);
    expect(reaped.sort()).toEqual([record.pid, ...tools].sort());
    await expectNothingLeft(environment);
  });

  it('reapOrphans ends what the tools left when claude itself has exited since', async () => {
    const environment = await sandbox();
    const record = await crashTether(environment);
    process.kill(record.pid, 'SIGKILL');
    // A ~200 MB process takes a moment to go: until then it is still R with an unreadable environment.
    expect(await pollUntil(() => !isAlive(record.pid), { timeoutMs: 10_000 })).toBe(true);
    const tools = await waitForToolProcesses(environment, 3);
    expect(claudeProcesses(environment)).toEqual([]);
    const { reaped } = await reapOrphans([record]);
    expect(reaped.sort()).toEqual(tools.sort());
    await expectNothingLeft(environment);
    expect(tools.some(isAlive)).toBe(false);
  });

  it('reapOrphans leaves a live claude alone when the record does not match it', async () => {
    const environment = await sandbox();
    const record = await crashTether(environment);
    expect(await reapOrphans([{ ...record, startTime: record.startTime - 1 }])).toEqual({ reaped: [] });
    expect(isAlive(record.pid)).toBe(true);
    expect(await waitForToolProcesses(environment, 3)).toHaveLength(3);
  });
});
