import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { createClaudeProvider } from '../claude-provider.js';
import { AgentPriorities, agentNiceOf, autogroupNiceOf, lowerAgentPriority } from './agent-priority.js';
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
  it("sets every thread of the child, and its own session's group, to the host's nice plus `by`", async () => {
    const pid = await threadedChild();
    expect(threadNices(pid).length).toBeGreaterThan(1);
    lowerAgentPriority(pid, 10);
    expect(new Set(threadNices(pid))).toEqual(new Set([Math.min(19, getPriority() + 10)]));
    const hostGroup = autogroupNiceOf('self');
    if (hostGroup !== undefined) expect(autogroupNiceOf(pid)).toBe(Math.min(19, hostGroup + 10));
  });

  it("never lowers the host's own session's group: a child in the host's session gets only its threads lowered", async () => {
    const hostGroup = autogroupNiceOf('self');
    const child = spawn(process.execPath, ['-e', 'console.log("up"); setInterval(() => {}, 1000)'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    started.push(child);
    await new Promise((resolve) => child.stdout.once('data', resolve));
    try {
      lowerAgentPriority(child.pid!, 10);
      expect(autogroupNiceOf('self')).toBe(hostGroup);
      expect(new Set(threadNices(child.pid!))).toEqual(new Set([Math.min(19, getPriority() + 10)]));
    } finally {
      // Had it been lowered, the rest of this test run would crawl: put back (only root may).
      if (hostGroup !== undefined && autogroupNiceOf('self') !== hostGroup)
        writeFileSync('/proc/self/autogroup', String(hostGroup), { flag: 'r+' });
    }
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

describe.runIf(process.platform === 'linux')('AgentPriorities', () => {
  const hostGroup = autogroupNiceOf('self');
  const yielding = Math.min(19, getPriority() + 10);
  const runsAs = (pid: number, nice: number, group: number | undefined) => {
    expect(new Set(threadNices(pid))).toEqual(new Set([nice]));
    if (group !== undefined) expect(autogroupNiceOf(pid)).toBe(group);
  };

  it('leaves a lone agent as the host; a second lowers both, and a third joins them lowered', async () => {
    const priorities = new AgentPriorities(10);
    const first = await threadedChild();
    priorities.started(first);
    runsAs(first, getPriority(), hostGroup);
    const second = await threadedChild();
    priorities.started(second);
    const third = await threadedChild();
    priorities.started(third);
    for (const pid of [first, second, third])
      runsAs(pid, yielding, hostGroup === undefined ? undefined : Math.min(19, hostGroup + 10));
  });

  it('counts only live agents: once the others exited, the next one is alone again', async () => {
    const priorities = new AgentPriorities(10);
    const ended = [await threadedChild(), await threadedChild()].map((pid) => priorities.started(pid));
    for (const exited of ended) exited();
    const next = await threadedChild();
    priorities.started(next);
    runsAs(next, getPriority(), hostGroup);
  });

  it('lowers nobody with 0', async () => {
    const priorities = new AgentPriorities(0);
    const agents = [await threadedChild(), await threadedChild()];
    for (const pid of agents) priorities.started(pid);
    for (const pid of agents) runsAs(pid, getPriority(), hostGroup);
  });
});
