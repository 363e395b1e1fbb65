import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { isAlive, pollUntil, readProcessCommandLine } from '@tether/provider-claude/test-support';
import { openSqliteStore } from '@tether/store-sqlite';
import { type ClaudeTestEnvironment, createClaudeTestEnvironment, processesWithEnvironment } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { withoutReports } from '../conformance/conformance-harness.js';
import { killExitWatchOf } from '../process-supervision/supervision-helpers.js';

// A host (a runtime in its own process, on a SQLite data dir) SIGKILLed at a chosen moment, and
// another host started on the same data dir and temporary folder, as a restarted service would be.

const hostScript = path.join(path.dirname(fileURLToPath(import.meta.url)), 'killable-host.mjs');
let environment: ClaudeTestEnvironment | undefined;

afterEach(async () => {
  // Each test SIGKILLs a host on purpose: what it left is ended before the clean-up's check.
  await environment?.killProcessesLeft();
  await environment?.cleanup();
  environment = undefined;
});

interface HostLine {
  readonly ready?: number;
  readonly event?: ProtocolEvent;
  readonly receipt?: { readonly commandId: string; readonly sessionId: string };
  readonly refused?: { readonly commandId: string; readonly code: string };
  readonly shutDown?: boolean;
}

/** killable-host.mjs: commands in, events and receipts out, one JSON line each. */
class Host {
  private readonly lines: HostLine[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly exited: Promise<void>;
  readonly child: ChildProcess;

  constructor(child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      this.lines.push(JSON.parse(line) as HostLine);
      for (const listener of this.listeners) listener();
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  send(command: object): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }

  /** The first line `where` accepts; rejects if the host exits first. */
  waitFor(where: (line: HostLine) => boolean): Promise<HostLine> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = this.lines.find(where);
        if (!found) return;
        this.listeners.delete(check);
        resolve(found);
      };
      this.listeners.add(check);
      check();
      void this.exited.then(() => reject(new Error(`The host exited; its last lines: ${this.tail()}`)));
    });
  }

  async event(type: ProtocolEvent['type']): Promise<ProtocolEvent> {
    return (await this.waitFor((line) => line.event?.type === type)).event!;
  }

  async command(command: { readonly commandId: string } & Record<string, unknown>): Promise<HostLine['receipt']> {
    this.send(command);
    const answer = await this.waitFor(
      (line) => line.receipt?.commandId === command.commandId || line.refused?.commandId === command.commandId,
    );
    if (!answer.receipt) throw new Error(`${command.commandId} refused: ${JSON.stringify(answer.refused)}`);
    return answer.receipt;
  }

  async kill(): Promise<void> {
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async shutdown(): Promise<void> {
    this.send({ type: 'shutdown' });
    await this.exited;
  }

  private tail(): string {
    return JSON.stringify(this.lines.slice(-5));
  }
}

async function startHost(testEnvironment: ClaudeTestEnvironment, provider: object = {}): Promise<Host> {
  const child = spawn(process.execPath, [hostScript], {
    env: {
      ...testEnvironment.environment,
      TETHER_TEST_HOST: JSON.stringify({
        dataDir: path.join(testEnvironment.home, 'tether-data'),
        claudePath: testEnvironment.claudePath,
        environment: testEnvironment.environment,
        provider,
      }),
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const host = new Host(child);
  await host.waitFor((line) => line.ready !== undefined);
  return host;
}

async function openSession(host: Host, testEnvironment: ClaudeTestEnvironment, settings: object = {}): Promise<string> {
  const receipt = await host.command({
    type: 'open_session',
    commandId: 'open',
    workspace: { kind: 'directory', path: testEnvironment.workspace },
    ...settings,
  });
  return receipt!.sessionId;
}

/** The processes of this test other than its hosts and claude: what the agents' tools started. */
function toolProcesses(testEnvironment: ClaudeTestEnvironment, hosts: readonly Host[]): number[] {
  return processesWithEnvironment('HOME', testEnvironment.home).filter(
    (pid) => !hosts.some((host) => host.pid === pid) && readProcessCommandLine(pid)?.[0] !== testEnvironment.claudePath,
  );
}

/** The session's stored log, read after every host has ended. */
async function storedEvents(testEnvironment: ClaudeTestEnvironment, sessionId: string): Promise<ProtocolEvent[]> {
  const store = await openSqliteStore({ dataDir: path.join(testEnvironment.home, 'tether-data') });
  try {
    return await store.readEvents(sessionId, { afterSeq: 0, limit: 10_000 });
  } finally {
    await store.close();
  }
}

/** A detached tool process that ignores SIGTERM: a sweep gives it a grace period before its SIGKILL. */
const termIgnoringCommand = `setsid sh -c 'trap "" TERM; exec sleep 300' > /dev/null 2>&1 &`;

/** A host whose claude's Bash tool left a process that ignores SIGTERM, the claude now held by the model. */
async function hostWaitingAfterATool(
  testEnvironment: ClaudeTestEnvironment,
): Promise<{ first: Host; sessionId: string }> {
  const first = await startHost(testEnvironment);
  const sessionId = await openSession(first, testEnvironment, { permissionMode: 'bypass' });
  testEnvironment.api.enqueue(
    toolUseReply('Bash', { command: termIgnoringCommand, description: 'Start background work' }),
    holdReply(),
  );
  await first.command({ type: 'submit_turn', commandId: 'turn', sessionId, input: [{ type: 'text', text: 'Go.' }] });
  await testEnvironment.api.waitForRequests(2, { kind: 'turn' });
  return { first, sessionId };
}

describe.runIf(process.platform === 'linux')('a host SIGKILLed, then another started on its data dir', () => {
  it("killed right after an idle release was stored, while its claude's tool leftovers were being swept: the next host ends them", async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    const first = await startHost(environment, { idleReleaseMs: 200 });
    const sessionId = await openSession(first, environment, { permissionMode: 'bypass' });
    environment.api.enqueue(
      toolUseReply('Bash', { command: termIgnoringCommand, description: 'Start background work' }),
      textReply('Started.'),
    );
    await first.command({ type: 'submit_turn', commandId: 'turn', sessionId, input: [{ type: 'text', text: 'Go.' }] });
    await first.event('run.completed');
    // Stored once the claude exited; the sweep of what its tool left has just begun (its SIGTERM is ignored).
    expect(await first.event('session.process_stopped')).toMatchObject({ reason: 'idle' });
    // Killed with its exit watch (as with its whole cgroup): what is left is the next host's to end.
    await killExitWatchOf(first.pid);
    await first.kill();
    const leftovers = toolProcesses(environment, []);
    // The precondition: the sweep had not ended it yet (it has a second of grace after the SIGTERM).
    expect(leftovers.map((pid) => readProcessCommandLine(pid)?.join(' '))).toEqual(['sleep 300']);

    // The store holds no process for the session any more: only the host's own record names it.
    const second = await startHost(environment);
    expect(await pollUntil(() => !leftovers.some(isAlive), { timeoutMs: 5_000 })).toBe(true);
    expect(toolProcesses(environment, [second])).toEqual([]);
    await second.shutdown();
  });

  it("killed mid-turn, its claude waiting on the model and a tool's process ignoring SIGTERM: both end at once, before any host starts again", async () => {
    const made = await createClaudeTestEnvironment({ sandbox: true });
    environment = made;
    const { first } = await hostWaitingAfterATool(made);
    const running = () => processesWithEnvironment('HOME', made.home).filter((pid) => pid !== first.pid);
    // The precondition: the claude (held by the model, so it would wait for good) and the tool's sleep
    // (its shell may still be on its way to exec it).
    const started = await pollUntil(() => running().some((pid) => readProcessCommandLine(pid)?.[0] === 'sleep'), {
      timeoutMs: 10_000,
    });
    const left = running();
    expect(started).toBe(true);
    expect(left.map((pid) => readProcessCommandLine(pid)?.[0])).toEqual(
      expect.arrayContaining([environment.claudePath, 'sleep']),
    );
    await first.kill();
    // No host runs any more: only the killed host's exit watch can end them (the sleep after its second of grace).
    expect(await pollUntil(() => !left.some(isAlive), { timeoutMs: 10_000 })).toBe(true);
  });

  it('killed while a prompt is open: the run ends runtime_restarted, the prompt cancelled, nothing left running', async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    const first = await startHost(environment);
    const sessionId = await openSession(first, environment);
    environment.api.enqueue(
      toolUseReply('Write', { file_path: path.join(environment.workspace, 'notes.txt'), content: 'Notes.' }),
      textReply('Written.'),
    );
    const turn = await first.command({
      type: 'submit_turn',
      commandId: 'turn',
      sessionId,
      input: [{ type: 'text', text: 'Write it.' }],
    });
    const requested = await first.event('interaction.requested');
    await first.kill();

    const second = await startHost(environment);
    expect(toolProcesses(environment, [second])).toEqual([]);
    await second.shutdown();
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    // The agent's plan-limits report answers whenever it gets to it: before the prompt or after (CI saw both).
    const events = withoutReports(await storedEvents(environment, sessionId));
    const after = events.slice(events.findIndex((event) => event.seq === requested.seq) + 1);
    expect(after.map((event) => event.type)).toEqual([
      'diagnostic',
      'interaction.cancelled',
      'run.tool_activity',
      'run.completed',
      'session.process_stopped',
    ]);
    // Its first turn died with the host: the next one starts the conversation anew, and says so.
    expect(after[0]).toMatchObject({ level: 'warning', code: 'session.conversation_not_kept' });
    expect(after[1]).toMatchObject({ reason: 'runtime_restarted' });
    expect(after[2]).toMatchObject({ status: 'failed', toolName: 'Write' });
    expect(after[3]).toMatchObject({
      runId: (turn as unknown as { runId: string }).runId,
      outcome: 'failed',
      error: { code: 'runtime_restarted' },
    });
    expect(after[4]).toMatchObject({ reason: 'restarted' });
    // What the recovery stored is stamped at one moment: no event's time goes back as seq goes up.
    expect(new Set(after.map((event) => event.at)).size).toBe(1);
  });

  it('killed during its own shutdown: what the shutdown stored stands, the next host adds no second end, nothing left running', async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true });
    const { first, sessionId } = await hostWaitingAfterATool(environment);
    first.send({ type: 'shutdown', options: { graceMs: 0 } });
    await first.event('run.completed');
    await first.kill();

    const second = await startHost(environment);
    expect(toolProcesses(environment, [second])).toEqual([]);
    await second.shutdown();
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    const events = await storedEvents(environment, sessionId);
    expect(events.filter((event) => event.type === 'run.completed')).toEqual([
      expect.objectContaining({ outcome: 'interrupted' }),
    ]);
    expect(events.filter((event) => event.type === 'session.process_stopped')).toHaveLength(1);
  });
});
