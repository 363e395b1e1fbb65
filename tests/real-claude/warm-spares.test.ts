import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent, SessionConfiguration } from '@tether/protocol';
import { pollFor, readProcessEnvironment } from '@tether/provider-claude/test-support';
import type { AgentRuntime } from '@tether/runtime';
import {
  type ClaudeTestEnvironment,
  answerText,
  createClaudeTestEnvironment,
  processesWithEnvironment,
  runEvents,
  waitForEvent,
  workingDirectoryResponder,
} from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * Warm spares on both transports: parked (`--await-claim`; on the sdk transport through the Agent
 * SDK's prewarm() and SpareProcess.claim) in a folder of their own and claimed for whichever folder
 * the next compatible session opens in (../shared/claude-cli-protocol-wave2.md §8).
 * What a caller can see: which process a session's first turn ran on, where the agent worked, the
 * diagnostic of a refused claim, and what is left running after shutdown.
 */

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

/** The agents Tether supervises in this environment (the `--version` check carries no marker). */
function agentProcesses(): number[] {
  return processesWithEnvironment('HOME', environment.home).filter((pid) =>
    readProcessEnvironment(pid)?.some((entry) => entry.startsWith('TETHER_PROCESS_MARKER=')),
  );
}

/** The one agent process running besides `busy`: the spare. */
function spareBesides(busy: readonly number[]): Promise<number> {
  return pollFor(() => {
    const spares = agentProcesses().filter((pid) => !busy.includes(pid));
    return spares.length === 1 ? spares[0] : undefined;
  });
}

async function folder(name: string): Promise<string> {
  const created = path.join(path.dirname(environment.workspace), name);
  await mkdir(created);
  return created;
}

function startedPids(events: readonly ProtocolEvent[]): number[] {
  return events.flatMap((event) => (event.type === 'session.process_started' ? [event.pid] : []));
}

async function turn(runtime: AgentRuntime, directory: string, text: string, configuration: SessionConfiguration = {}) {
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: directory },
    ...configuration,
  });
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const events = await runEvents(runtime, sessionId, runId);
  return { sessionId, runId, events, all: await runtime.readEvents(sessionId) };
}

/** Where the agent says it works: the CLI names its cwd in every request's system prompt. */
const echoWorkingDirectory = workingDirectoryResponder((directory) => textReply(`Working in ${directory}.`));

/**
 * A runtime with a pool of one spare, in an environment whose agent says where it works: its first
 * session has had a turn (on the spare its open started), and the spare that replaced it is up.
 */
async function poolWithSpare(transport: 'cli' | 'sdk') {
  environment = await createClaudeTestEnvironment({ responder: echoWorkingDirectory, transport });
  const runtime = await environment.runtime({ provider: { warmPool: { spares: 1 } } });
  const first = await turn(runtime, environment.workspace, 'Start.');
  return { runtime, spare: await spareBesides(startedPids(first.all)) };
}

describe.each(['cli', 'sdk'] as const)('warm spares for any folder (%s transport)', (transport) => {
  it('a parked spare serves a new session in a folder never seen before, and is replaced in the background', async () => {
    environment = await createClaudeTestEnvironment({ responder: echoWorkingDirectory, transport });
    const runtime = await environment.runtime({ provider: { warmPool: { spares: 1 } } });
    const first = await turn(runtime, environment.workspace, 'Where are you?');
    const [firstPid] = startedPids(first.all);
    const spare = await spareBesides([firstPid!]);
    // The spare waits in the pool's own empty folder, not in any session's.
    const parking = readlinkSync(`/proc/${spare}/cwd`);
    expect(parking).not.toBe(environment.workspace);

    const fresh = await folder('never-seen');
    const second = await turn(runtime, fresh, 'And now?');
    expect(answerText(second.events)).toBe(`Working in ${fresh}.`);
    expect(second.events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    // The spare ran the turn: no process of its own was started for it, and a new spare took its place.
    expect(startedPids(second.all)).toEqual([spare]);
    expect(readlinkSync(`/proc/${spare}/cwd`)).toBe(fresh);
    const replacement = await spareBesides([firstPid!, spare]);
    expect(agentProcesses().sort()).toEqual([firstPid, spare, replacement].sort());
    expect(second.all.some((event) => event.type === 'diagnostic')).toBe(false);

    // A cold process in every way that matters afterwards: its transcript is the folder's, so a fork resumes from it.
    const changed = second.all.find((event) => event.type === 'session.provider_session_changed');
    const providerSessionId = (changed as { providerSessionId: string }).providerSessionId;
    const projects = path.join(environment.home, '.claude', 'projects');
    expect(existsSync(path.join(projects, fresh.replaceAll(/[^a-zA-Z0-9]/g, '-'), `${providerSessionId}.jsonl`))).toBe(
      true,
    );
    environment.api.setResponder(() => textReply('Forked.'));
    const { forkSessionId } = await runtime.forkSession({ sessionId: second.sessionId });
    const forked = await runtime.submitTurn({ sessionId: forkSessionId, input: [{ type: 'text', text: 'Recall?' }] });
    expect(answerText(await runEvents(runtime, forkSessionId, forked.runId))).toBe('Forked.');
    const forkRequest = environment.api.requests.filter((request) => request.kind === 'turn').at(-1);
    expect(JSON.stringify(forkRequest?.body)).toContain('And now?');

    // The mode travels with the claim: a plan-mode session takes the same spare as the others.
    environment.api.setResponder(echoWorkingDirectory);
    const planned = await folder('planned');
    const third = await turn(runtime, planned, 'Plan it.', { permissionMode: 'plan' });
    expect(startedPids(third.all)).toEqual([replacement]);
    expect(answerText(third.events)).toBe(`Working in ${planned}.`);
    expect(third.all.filter((event) => event.type === 'session.mode_changed')).toEqual([
      expect.objectContaining({ mode: 'plan', source: 'provider' }),
    ]);

    const stillParked = agentProcesses().filter((pid) => readlinkSync(`/proc/${pid}/cwd`) === parking);
    await runtime.shutdown();
    expect(stillParked).toHaveLength(1);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    expect(existsSync(parking)).toBe(false);
  });

  it('a new session takes the spare as its opening is recorded: claimed for its folder before any turn, which then runs on it', async () => {
    const { runtime, spare } = await poolWithSpare(transport);

    const fresh = await folder('opened-before-its-turn');
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: fresh } });
    // Ready or still starting, the spare is this session's from its opening on: no turn was asked for yet.
    const started = await waitForEvent(runtime, sessionId, 'session.process_started');
    expect(started.pid).toBe(spare);
    expect((await runtime.readEvents(sessionId)).map((event) => event.type)).toEqual([
      'session.opened',
      'session.process_started',
    ]);
    await pollFor(() => (readlinkSync(`/proc/${spare}/cwd`) === fresh ? true : undefined));

    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Where now?' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(answerText(events)).toBe(`Working in ${fresh}.`);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const all = await runtime.readEvents(sessionId);
    expect(startedPids(all)).toEqual([spare]);
    expect(all.some((event) => event.type === 'diagnostic')).toBe(false);
  });

  it('a session closed right after its opening leaves nothing of its spare running: the next session is served, and shutdown ends all', async () => {
    const { runtime } = await poolWithSpare(transport);
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: await folder('closed-at-once') },
    });
    await runtime.closeSession({ sessionId });
    // Taken and claimed before the close, the spare was stopped with the session; a take still waiting
    // was given up, and the spare stays the pool's.
    const closed = await runtime.readEvents(sessionId);
    const taken = startedPids(closed);
    expect(taken.length).toBeLessThanOrEqual(1);
    for (const pid of taken) expect(agentProcesses()).not.toContain(pid);
    expect(closed.filter((event) => event.type === 'session.process_stopped')).toHaveLength(taken.length);

    const fresh = await folder('after-the-close');
    const next = await turn(runtime, fresh, 'Next?');
    expect(answerText(next.events)).toBe(`Working in ${fresh}.`);
    expect(next.events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    await runtime.shutdown();
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it("a tool runs in the claiming session's folder (bypass: the spare is launched in it, not claimed into it)", async () => {
    environment = await createClaudeTestEnvironment({ sandbox: true, transport });
    environment.api.enqueue(textReply('Ready.'));
    const runtime = await environment.runtime({ provider: { warmPool: { spares: 1 } } });
    const bypass: SessionConfiguration = { permissionMode: 'bypass' };
    const first = await turn(runtime, environment.workspace, 'Start.', bypass);
    const spare = await spareBesides(startedPids(first.all));
    const fresh = await folder('tool-folder');
    environment.api.enqueue(
      toolUseReply('Bash', { command: 'pwd > where.txt', description: 'Note the folder' }),
      textReply('Noted.'),
    );
    const second = await turn(runtime, fresh, 'Where?', bypass);
    expect(answerText(second.events)).toBe('Noted.');
    expect(startedPids(second.all)).toEqual([spare]);
    expect(readFileSync(path.join(fresh, 'where.txt'), 'utf8').trim()).toBe(fresh);
  });

  it('a session whose configuration a claim cannot carry starts cold and leaves the spare alone', async () => {
    const { runtime, spare } = await poolWithSpare(transport);
    // Environment variables are read at start-up: only a spare started with them could serve this session.
    const other = await folder('other-environment');
    const second = await turn(runtime, other, 'Here?', { environment: { TETHER_SPARE_TEST: 'other' } });
    expect(answerText(second.events)).toBe(`Working in ${other}.`);
    expect(startedPids(second.all)).not.toContain(spare);
    expect(agentProcesses()).toContain(spare);
    expect(readlinkSync(`/proc/${spare}/cwd`)).not.toBe(other);
  });

  it('a refused claim is told, and the first turn starts cold and succeeds', async () => {
    const { runtime, spare } = await poolWithSpare(transport);
    // A folder whose project settings choose the model: a cold start applies them, a claim cannot.
    const configured = await folder('configured');
    await mkdir(path.join(configured, '.claude'));
    await writeFile(path.join(configured, '.claude', 'settings.json'), JSON.stringify({ model: 'claude-sonnet-4-5' }));
    // The spare is claimed as the session opens: refused, it is told then, before any turn.
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: configured } });
    const refused = await waitForEvent(runtime, sessionId, 'diagnostic');
    expect(refused).toMatchObject({
      level: 'warning',
      code: 'claude.spare_claim_refused.project_settings_not_claimable',
    });
    expect(refused).not.toHaveProperty('runId');
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Here?' }] });
    const second = { runId, events: await runEvents(runtime, sessionId, runId), all: [] as ProtocolEvent[] };
    second.all = await runtime.readEvents(sessionId);
    expect(answerText(second.events)).toBe(`Working in ${configured}.`);
    expect(second.events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const started = startedPids(second.all);
    expect(started).toHaveLength(2);
    expect(started[0]).toBe(spare);
    expect(agentProcesses()).not.toContain(spare);
    expect(second.all.filter((event) => event.type === 'session.process_stopped').map((event) => event.reason)).toEqual(
      ['released'],
    );
    // The cold process applied the folder's settings, as any cold start does.
    const lastRequest = environment.api.requests.filter((request) => request.kind === 'turn').at(-1);
    expect((lastRequest?.body as { model?: string } | undefined)?.model).toBe('claude-sonnet-4-5');
  });
});
