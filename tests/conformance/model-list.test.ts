import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  type ClaudeTestEnvironment,
  agentErrorOf,
  countingClaude,
  processesWithEnvironment,
  waitForEvent,
} from '@tether/testkit';
import { textReply } from '@tether/fake-anthropic-api';
import { expect, it, vi } from 'vitest';
import { describeTransports } from './conformance-harness.js';

describeTransports('the model list', ({ start }) => {
  it("lists the agent's built-in models with their version, and asks the agent once per binary", async () => {
    const environment = await start();
    const claude = await countingClaude(environment);
    const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
    const list = await runtime.listModels('claude');
    expect(list.provider).toBe('claude');
    const version = execFileSync(environment.claudePath, ['--version'], { env: environment.environment }).toString();
    expect(list.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(version.startsWith(list.agentVersion!)).toBe(true);
    const ids = list.models.map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['sonnet', 'opus']));
    const sonnet = list.models.find((model) => model.id === 'sonnet')!;
    expect(sonnet.displayName).not.toBe('');
    expect(sonnet.resolvedModel).toMatch(/^claude-/);
    expect(sonnet.effortLevels.length).toBeGreaterThan(0);
    expect(await claude.starts()).toHaveLength(1);
    // Nothing of that start is left running.
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);

    expect(await runtime.listModels('claude')).toEqual(list);
    // Another runtime in the same process: the list is kept per binary, not per provider.
    const another = await environment.runtime({ provider: { claudePath: claude.path } });
    expect(await another.listModels('claude')).toEqual(list);
    expect(await claude.starts()).toHaveLength(1);
  });

  it("asked while a session's agent runs, is read from that agent: no agent starts only to list the models", async () => {
    const environment = await start();
    const claude = await countingClaude(environment);
    const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(textReply('Here.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const list = await runtime.listModels('claude');
    expect(list.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(list.models.map((model) => model.id)).toEqual(expect.arrayContaining(['sonnet', 'opus']));
    expect(await claude.starts()).toHaveLength(1);
    // The same list a start of its own gives (another binary file: nothing kept for it).
    const lister = await countingClaude(environment, 'lists-only');
    const another = await environment.runtime({ provider: { claudePath: lister.path } });
    expect(await another.listModels('claude')).toEqual(list);
    expect(await lister.starts()).toHaveLength(1);
    // The session's agent still takes turns.
    environment.api.enqueue(textReply('Still here.'));
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Again.' }] });
    expect(await runtime.waitForRun(second.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(await claude.starts()).toHaveLength(1);
  });

  it('asked as a session opened with its agent starts, is read from that agent once it has started', async () => {
    const environment = await start();
    const { claude, runtime, sessionId } = await sessionWithItsAgent(environment);
    const list = await runtime.listModels('claude');
    expect(list.models.map((model) => model.id)).toEqual(expect.arrayContaining(['sonnet', 'opus']));
    expect(list.agentVersion).toMatch(/^\d+\.\d+\.\d+/);
    expect(await claude.starts()).toHaveLength(1);
    environment.api.enqueue(textReply('Here.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    expect(await claude.starts()).toHaveLength(1);
  });

  it("is read again once the user's settings change: a model they name is listed, by no agent started before", async () => {
    const environment = await start();
    const { claude, runtime } = await sessionWithItsAgent(environment);
    const ownModel = 'claude-own-model-1';
    const ids = async () => (await runtime.listModels('claude')).models.map((model) => model.id);
    expect(await ids()).not.toContain(ownModel);
    expect(await claude.starts()).toHaveLength(1);
    // The user names a model of theirs in ~/.claude/settings.json while the daemon (here, the runtime) runs.
    await mkdir(path.join(environment.home, '.claude'), { recursive: true });
    await writeFile(path.join(environment.home, '.claude', 'settings.json'), JSON.stringify({ model: ownModel }));
    expect(await ids()).toContain(ownModel);
    // The session's agent read the settings before the edit: an agent of the list's own read it.
    expect(await claude.starts()).toHaveLength(2);
    // Kept again until the next edit.
    expect(await ids()).toContain(ownModel);
    expect(await claude.starts()).toHaveLength(2);
  });

  it('a session closed while its model change reads the list leaves that read to the others who asked for it', async () => {
    const environment = await start();
    const claude = await countingClaude(environment, 'held-lister');
    const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    // No agent runs: the change reads the list by a start of its own, held until released.
    const setting = runtime.setModel({ sessionId, model: 'sonnet' }).catch((error: unknown) => error);
    await vi.waitFor(async () => expect(await claude.starts()).toHaveLength(1), { timeout: 30_000 });
    const listing = runtime.listModels('claude');
    await runtime.closeSession({ sessionId });
    await writeFile(path.join(path.dirname(environment.home), 'release-lister'), '');
    expect((await listing).models.map((model) => model.id)).toEqual(expect.arrayContaining(['sonnet', 'opus']));
    expect(await claude.starts()).toHaveLength(1);
    await setting;
    await vi.waitFor(() => expect(processesWithEnvironment('HOME', environment.home)).toEqual([]), { timeout: 30_000 });
  });

  it('asks no agent whose list may carry a model of its own: launched on one, given one live, under project settings that set one', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Here.'));
    const ownModel = 'claude-own-model-1';
    /** A session in `folder` (a runtime of its own, over its own binary file: nothing kept is shared), one turn taken, then the list. */
    const listBeside = async (name: string, folder: string, options: { model?: string; setLive?: boolean } = {}) => {
      const claude = await countingClaude(environment, 'real', name);
      const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
      const { sessionId } = await runtime.openSession({
        workspace: { kind: 'directory', path: folder },
        ...(options.model ? { model: options.model } : {}),
      });
      const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
      expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
      if (options.setLive) await runtime.setModel({ sessionId, model: ownModel });
      const ids = (await runtime.listModels('claude')).models.map((model) => model.id);
      return { ids, starts: (await claude.starts()).length };
    };
    const launched = await listBeside('launched-on-its-own', environment.workspace, { model: ownModel });
    expect(launched).toEqual({ ids: expect.not.arrayContaining([ownModel]), starts: 2 });
    const setLive = await listBeside('given-one-live', environment.workspace, { setLive: true });
    expect(setLive).toEqual({ ids: expect.not.arrayContaining([ownModel]), starts: 2 });
    const projectSettings = async (folderName: string, settings: object) => {
      const folder = path.join(path.dirname(environment.home), folderName);
      await mkdir(path.join(folder, '.claude'), { recursive: true });
      await writeFile(path.join(folder, '.claude', 'settings.json'), JSON.stringify(settings));
      return folder;
    };
    const underSettings = await listBeside('under-settings', await projectSettings('modelled', { model: ownModel }));
    expect(underSettings).toEqual({ ids: expect.not.arrayContaining([ownModel]), starts: 2 });
    // Project settings that set neither a model nor variables leave the list as it is: that agent is asked.
    const plain = await listBeside(
      'under-plain-settings',
      await projectSettings('plain', { permissions: { allow: [] } }),
    );
    expect(plain).toEqual({ ids: expect.arrayContaining(['sonnet', 'opus']), starts: 1 });
  });

  it('a session agent started with a settings file of its own is not asked: the list is read by an agent of its own', async () => {
    const environment = await start();
    const claude = await countingClaude(environment);
    const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
    // A settings file can shape the list (its modelPicker, say): that agent's answer is not the one asked for.
    const settingsPath = path.join(path.dirname(environment.home), 'settings.json');
    await writeFile(settingsPath, '{}\n');
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      settingsPath,
    });
    environment.api.enqueue(textReply('Here.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    expect((await runtime.listModels('claude')).models.length).toBeGreaterThan(0);
    expect(await claude.starts()).toHaveLength(2);
    expect((await claude.starts())[1]).not.toContain('--settings');
  });

  it('an agent that cannot answer is provider_unavailable, never an empty list, and a retry asks again', async () => {
    const environment = await start();
    const claude = await countingClaude(environment, 'exits');
    const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
    const error = await agentErrorOf(runtime.listModels('claude'));
    expect(error.code).toBe('provider_unavailable');
    expect(error.message).toMatch(/model list.*ask again/);
    expect(error.details).toMatchObject({ reason: 'agent_exited', exitCode: 3, binaryPath: claude.path });
    await agentErrorOf(runtime.listModels('claude'));
    expect(await claude.starts()).toHaveLength(2);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('an agent that never answers is provider_unavailable after the bound, and is ended', async () => {
    const environment = await start();
    const claude = await countingClaude(environment, 'silent');
    const runtime = await environment.runtime({ provider: { claudePath: claude.path, modelListTimeoutMs: 300 } });
    const error = await agentErrorOf(runtime.listModels('claude'));
    expect(error.code).toBe('provider_unavailable');
    expect(error.details?.reason).toBe('model_list_timeout');
    expect(await claude.starts()).toHaveLength(1);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it("reads the list at the lowest CPU priority: beside a session's agent starting, it takes only what is left", async () => {
    const environment = await start();
    const claude = await countingClaude(environment, 'silent-lister');
    const runtime = await environment.runtime({ provider: { claudePath: claude.path, modelListTimeoutMs: 600_000 } });
    const listing = agentErrorOf(runtime.listModels('claude'));
    let lister = 0;
    await vi.waitFor(
      () => {
        const listers = processesWithEnvironment('HOME', environment.home);
        expect(listers).toHaveLength(1);
        lister = listers[0]!;
        expect(os.getPriority(lister)).toBe(os.constants.priority.PRIORITY_LOW);
      },
      { timeout: 30_000 },
    );
    // The read is not an agent beside the session's: that one, alone, runs as the host does.
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(textReply('Here.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const agents = processesWithEnvironment('HOME', environment.home).filter((pid) => pid !== lister);
    expect(agents).toHaveLength(1);
    expect(os.getPriority(agents[0])).toBe(os.getPriority());
    expect(os.getPriority(lister)).toBe(os.constants.priority.PRIORITY_LOW);
    await runtime.shutdown();
    expect((await listing).code).toBe('runtime_stopped');
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('a runtime shutting down while the list is read ends that agent at once, and the read fails runtime_stopped', async () => {
    const environment = await start();
    const claude = await countingClaude(environment, 'silent');
    const runtime = await environment.runtime({ provider: { claudePath: claude.path, modelListTimeoutMs: 600_000 } });
    const listing = agentErrorOf(runtime.listModels('claude'));
    await vi.waitFor(async () => expect(await claude.starts()).toHaveLength(1), { timeout: 30_000 });
    await runtime.shutdown();
    expect((await listing).code).toBe('runtime_stopped');
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });

  it('a provider disposed (its host shutting down) starts no agent for a list asked after that', async () => {
    const environment = await start();
    const claude = await countingClaude(environment);
    const provider = environment.provider({ claudePath: claude.path });
    await provider.doDispose?.();
    const error = await agentErrorOf(provider.doListModels!());
    expect(error).toMatchObject({ code: 'provider_unavailable', details: { reason: 'provider_disposed' } });
    expect(error.message).toContain('shutting down');
    expect(await claude.starts()).toEqual([]);
  });
});

/** A runtime over a counting claude, and a session opened with its agent started (and reported). */
async function sessionWithItsAgent(environment: ClaudeTestEnvironment) {
  const claude = await countingClaude(environment);
  const runtime = await environment.runtime({ provider: { claudePath: claude.path } });
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: environment.workspace },
    startAgent: true,
  });
  await waitForEvent(runtime, sessionId, 'session.process_started');
  return { claude, runtime, sessionId };
}
