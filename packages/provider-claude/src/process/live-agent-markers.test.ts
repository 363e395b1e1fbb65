import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ClaudeProcess } from './claude-process.js';
import { liveAgentMarkers, liveAgentsFolderPrefix, sweepAgentsOfEndedHosts } from './live-agent-markers.js';
import { readProcessStatus } from './proc-filesystem.js';
import { createProcessMarker, processMarkerVariable } from './process-marker.js';
import { killedAfterEachTest } from './test-processes.test-helper.js';

const { markers, started } = killedAfterEachTest();
let directory: string;

beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'live-agent-markers-'));
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const namespace = Number(/\d+/.exec(readlinkSync('/proc/self/ns/pid'))?.[0]);

async function spawned(command: string, args: string[], environment: NodeJS.ProcessEnv = {}): Promise<ChildProcess> {
  const child = spawn(command, args, { stdio: 'ignore', env: { ...process.env, ...environment } });
  started.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return child;
}

/** A process carrying a fresh marker, as a tool command an agent started would. */
async function markedSleeper(): Promise<{ marker: string; pid: number; exit: Promise<unknown> }> {
  const marker = createProcessMarker();
  markers.push(marker);
  const child = await spawned('sleep', ['60'], { [processMarkerVariable]: marker });
  return {
    marker,
    pid: child.pid!,
    exit: new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal))),
  };
}

/** A host's folder of live agents, named for `creator`, holding `recorded`. */
function hostFolder(creator: { pid: number; startTime: number }, recorded: readonly string[]): string {
  const folder = path.join(
    directory,
    `${liveAgentsFolderPrefix}${namespace}-${creator.pid}-${creator.startTime}-AbC123`,
  );
  mkdirSync(folder);
  for (const marker of recorded) writeFileSync(path.join(folder, marker), '');
  return folder;
}

describe.runIf(process.platform === 'linux')("a host's record of its live agents", () => {
  it('holds an agent from before its spawn until its exit was swept; with no agent left, its folder goes', async () => {
    const agent = new ClaudeProcess({
      binaryPath: 'sleep',
      argv: ['60'],
      environment: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: process.cwd(),
      onExit: () => undefined,
    });
    markers.push(agent.marker);
    expect(liveAgentMarkers()).toContain(agent.marker);
    await agent.stop({ busy: true, force: true });
    await agent.swept;
    expect(liveAgentMarkers()).not.toContain(agent.marker);
    const ownFolder = `${liveAgentsFolderPrefix}${namespace}-${process.pid}-`;
    expect(readdirSync(os.tmpdir()).filter((name) => name.startsWith(ownFolder))).toEqual([]);
  });

  it('records nothing for an agent that could not be spawned', () => {
    let marker: string | undefined;
    expect(() => {
      const agent = new ClaudeProcess({
        binaryPath: 'sleep',
        argv: ['60'],
        environment: { PATH: process.env.PATH ?? '/usr/bin:/bin', HUGE: 'x'.repeat(200 * 1024) },
        cwd: process.cwd(),
        onExit: () => undefined,
      });
      marker = agent.marker;
    }).toThrow();
    expect(marker).toBeUndefined();
    expect(liveAgentMarkers()).toEqual([]);
  });

  it("the next host ends what a SIGKILLed host's agents left and removes its record; a running host's is kept", async () => {
    const deadHost = await spawned('sleep', ['60']);
    const deadCreator = { pid: deadHost.pid!, startTime: readProcessStatus(deadHost.pid!)!.startTime };
    deadHost.kill('SIGKILL');
    await new Promise((resolve) => deadHost.once('exit', resolve));
    const left = await markedSleeper();
    const deadFolder = hostFolder(deadCreator, [left.marker, createProcessMarker()]);
    const liveHost = await spawned('sleep', ['60']);
    const running = await markedSleeper();
    const liveFolder = hostFolder({ pid: liveHost.pid!, startTime: readProcessStatus(liveHost.pid!)!.startTime }, [
      running.marker,
    ]);

    expect(await sweepAgentsOfEndedHosts({ directory })).toEqual([left.pid]);
    expect(await left.exit).toBe('SIGTERM');
    expect(existsSync(deadFolder)).toBe(false);
    expect(existsSync(liveFolder)).toBe(true);
    expect(readProcessStatus(running.pid)?.state).toMatch(/^[RS]$/);
  });
});
