import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { createClaudeProvider } from '../claude-provider.js';
import { agentNiceOf, autogroupNiceOf, lowerAgentPriority } from './agent-priority.js';
import { pollUntil } from './poll-until.js';
import { killedAfterEachTest } from './test-processes.test-helper.js';

const { started } = killedAfterEachTest();

/** Field 19 of /proc/<pid>/task/<tid>/stat, read after the last ")" (the command name may hold spaces). */
function threadNices(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((thread) => {
    const stat = readFileSync(`/proc/${pid}/task/${thread}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('agentNice', () => {
  it('is 10 unless set; 0 to 19 are taken as they are', () => {
    expect(agentNiceOf(undefined)).toBe(10);
    expect([0, 1, 19].map(agentNiceOf)).toEqual([0, 1, 19]);
  });

  it('refuses what is not a whole number from 0 to 19 with provider_configuration_refused, saying what to give, when the provider is created', () => {
    const refusal = expect.objectContaining({
      name: AgentError.name,
      code: 'provider_configuration_refused',
      details: { reason: 'agent_nice_out_of_range' },
      message: expect.stringContaining('from 0 (the agents run as the host does) to 19'),
    });
    for (const setting of [-1, 20, 2.5, Number.NaN]) expect(() => agentNiceOf(setting)).toThrow(refusal);
    expect(() => createClaudeProvider({ agentNice: 25 })).toThrow(refusal);
  });
});

describe.runIf(process.platform === 'linux')('lowerAgentPriority', () => {
  /** A Node child: several threads (V8's, libuv's) by the time it has printed. */
  async function threadedChild(): Promise<number> {
    const child = spawn(process.execPath, ['-e', 'console.log("up"); setInterval(() => {}, 1000)'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    started.push(child);
    await new Promise((resolve) => child.stdout.once('data', resolve));
    return child.pid!;
  }

  it("sets every thread of the child, and its own session's group, to the host's nice plus `by`", async () => {
    const pid = await threadedChild();
    expect(threadNices(pid).length).toBeGreaterThan(1);
    lowerAgentPriority(pid, 10);
    expect(new Set(threadNices(pid))).toEqual(new Set([Math.min(19, getPriority() + 10)]));
    const hostGroup = autogroupNiceOf('self');
    if (hostGroup !== undefined) expect(autogroupNiceOf(pid)).toBe(Math.min(19, hostGroup + 10));
  });

  it('leaves the child as it is with 0, and says nothing about a child already gone', async () => {
    const pid = await threadedChild();
    lowerAgentPriority(pid, 0);
    expect(new Set(threadNices(pid))).toEqual(new Set([getPriority()]));
    process.kill(pid, 'SIGKILL');
    expect(await pollUntil(() => !existsSync(`/proc/${pid}`), { timeoutMs: 5_000 })).toBe(true);
    expect(() => lowerAgentPriority(pid, 10)).not.toThrow();
  });
});
