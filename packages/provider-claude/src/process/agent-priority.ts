import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { AgentError } from '@tether/protocol';

/** Linux nice values: -20 (the most CPU) to 19 (yields the most). */
const niceRange = { lowest: -20, highest: 19 } as const;

/** How much nicer than the host the agents run unless told otherwise: ~a tenth of its share while the CPU is contended. */
const defaultAgentNice = 10;

/** Whether `value` can be an agentNice: a whole number from 0 (as the host) to 19. */
export function isAgentNice(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value <= niceRange.highest;
}

/** The provider's agentNice setting, checked: a whole number from 0 to 19, 10 when absent. */
export function agentNiceOf(setting: number | undefined): number {
  if (setting === undefined) return defaultAgentNice;
  if (!isAgentNice(setting)) {
    throw new AgentError({
      code: 'provider_configuration_refused',
      message: `agentNice must be a whole number from 0 (the agents run as the host does) to ${niceRange.highest} (they yield the most), not ${String(setting)}. Leave it out for the default, ${defaultAgentNice}.`,
      details: { reason: 'agent_nice_out_of_range' },
    });
  }
  return setting;
}

function clampNice(value: number): number {
  return Math.min(niceRange.highest, Math.max(niceRange.lowest, value));
}

/** A process's autogroup ("/autogroup-25 nice 0"), or undefined where there are no autogroups (or no such process). */
function autogroupOf(pid: number | 'self'): { readonly name: string; readonly nice: number } | undefined {
  try {
    const match = /^(\S+) nice (-?\d+)/.exec(readFileSync(`/proc/${pid}/autogroup`, 'utf8'));
    return match ? { name: match[1]!, nice: Number(match[2]) } : undefined;
  } catch {
    return undefined;
  }
}

/** A process's autogroup nice, or undefined where there are no autogroups (or no such process). */
export function autogroupNiceOf(pid: number | 'self'): number | undefined {
  return autogroupOf(pid)?.nice;
}

/**
 * Makes a just-started agent (and what it starts) yield the CPU to its host when the machine is
 * saturated: eight agents streaming on two cores otherwise held a daemon's event loop for up to a
 * second, delaying every session's events, stops and answers
 * (docs/decisions/2026-12-03-agents-yield-the-cpu-to-their-host.md). Nothing changes while a core is free.
 *
 * `by` is added to the host's own nice value, as `nice -n` does, capped at 19. Linux schedules either
 * by autogroup (a process in the root CPU cgroup: each session is one group, and the agent has a
 * session of its own; one left in the host's session keeps the group, which is the host's too) or by task
 * (inside a CPU cgroup, as in a container): the agent's group gets the
 * host's group's nice plus `by` for the first, every current thread of the agent the host's own nice
 * plus `by` for the second; threads and processes started later inherit it from the thread that
 * starts them. Raising a nice needs no privilege. Best effort, and nothing off Linux: a kernel without
 * autogroups, or a thread that ended meanwhile, leaves the rest as it is.
 */
export function lowerAgentPriority(pid: number, by: number): void {
  if (process.platform !== 'linux' || by <= 0) return;
  const hostGroup = autogroupOf('self');
  // An agent still in the host's session shares its group: lowering that group would lower the host,
  // and every other program of the session (a terminal's shell and all it runs), for as long as it lasts.
  if (hostGroup !== undefined && autogroupOf(pid)?.name !== hostGroup.name) {
    try {
      writeFileSync(`/proc/${pid}/autogroup`, String(clampNice(hostGroup.nice + by)));
    } catch {
      // The agent is gone already, or its kernel refuses: its threads' nice below still applies in a cgroup.
    }
  }
  let threads: string[];
  try {
    threads = readdirSync(`/proc/${pid}/task`);
  } catch {
    return;
  }
  const threadNice = clampNice(getPriority() + by);
  // The main thread (its id is the pid) comes first in the listing: the threads it starts next inherit its value.
  for (const thread of threads) {
    try {
      setPriority(Number(thread), threadNice);
    } catch {
      // The thread ended between the listing and here.
    }
  }
}

/** What a spawned agent tells about itself, so its priority follows how many agents the host has. */
export interface AgentPriority {
  /** A just-spawned agent (after exec); the returned function is called once it exited. */
  started(pid: number): () => void;
}

/**
 * One provider's agents' priority. A lone agent runs as its host does: it cannot crowd the host out
 * (it uses ~1.4 cores while it streams, and the kernel shares the CPU between the two), and lowered it
 * yielded to every other program too, such as a local API server, which cost its start 12-17 ms
 * on 2 cores (docs/decisions/2026-12-04-a-lone-agent-runs-as-its-host.md). From the second live agent
 * on, every one of them runs `by` nicer (lowerAgentPriority), those already running lowered then:
 * that is when agents can saturate the machine. A nice is never raised again (that needs privilege),
 * so an agent lowered once stays lowered.
 */
export class AgentPriorities implements AgentPriority {
  private readonly by: number;
  /** The live agents, each with whether it was lowered. */
  private readonly live = new Map<number, boolean>();

  constructor(by: number) {
    this.by = by;
  }

  started(pid: number): () => void {
    this.live.set(pid, false);
    if (this.by > 0 && this.live.size > 1) {
      for (const [agent, lowered] of this.live) {
        if (lowered) continue;
        lowerAgentPriority(agent, this.by);
        this.live.set(agent, true);
      }
    }
    return () => {
      this.live.delete(pid);
    };
  }
}
