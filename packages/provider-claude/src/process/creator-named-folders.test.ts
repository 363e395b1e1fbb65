import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCreatorNamedFolderSync, creatorOf, removeFoldersOfEndedCreators } from './creator-named-folders.js';
import { readProcessStatus } from './proc-filesystem.js';
import { killedAfterEachTest } from './test-processes.test-helper.js';

const { started } = killedAfterEachTest();
const prefix = 'tether-test-leftover-';
let directory: string;

beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'creator-named-folders-'));
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const namespace = Number(/\d+/.exec(readlinkSync('/proc/self/ns/pid'))?.[0]);

async function sleeper(): Promise<{ child: ChildProcess; pid: number; startTime: number }> {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  started.push(child);
  await new Promise((resolve) => child.once('spawn', resolve));
  return { child, pid: child.pid!, startTime: readProcessStatus(child.pid!)!.startTime };
}

/** A folder named as a process with this pid and start time would have made it. */
function leftover(creator: { pid: number; startTime: number }, options: { namespace?: number } = {}): string {
  const folder = path.join(
    directory,
    `${prefix}${options.namespace ?? namespace}-${creator.pid}-${creator.startTime}-AbC123`,
  );
  mkdirSync(folder);
  writeFileSync(path.join(folder, 'append-system-prompt.txt'), 'Private.');
  return folder;
}

describe.runIf(process.platform === 'linux')('folders named for the process that made them', () => {
  it('a folder made here names this process', () => {
    const folder = createCreatorNamedFolderSync(prefix);
    try {
      expect(creatorOf(path.basename(folder), prefix)).toEqual({
        namespace,
        pid: process.pid,
        startTime: readProcessStatus(process.pid)!.startTime,
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("removes only the folders of creators that are gone (SIGKILLed hosts); a live one's, and what it cannot tell, are kept", async () => {
    const dead = await sleeper();
    dead.child.kill('SIGKILL');
    await new Promise((resolve) => dead.child.once('exit', resolve));
    const live = await sleeper();

    const ofDead = leftover(dead);
    const ofLive = leftover(live);
    // Its pid now names a later process.
    const ofReusedPid = leftover({ pid: live.pid, startTime: live.startTime - 1 });
    const ofThisProcess = leftover({ pid: process.pid, startTime: readProcessStatus(process.pid)!.startTime });
    // A pid of another namespace (a container sharing the folder) names some other process here.
    const ofOtherNamespace = leftover(dead, { namespace: namespace + 1 });
    // An older Tether's name, without its creator.
    const unnamed = path.join(directory, `${prefix}AbC123`);
    mkdirSync(unnamed);
    const notAFolder = path.join(directory, `${prefix}${namespace}-${dead.pid}-${dead.startTime}-File12`);
    writeFileSync(notAFolder, '');
    const link = path.join(directory, `${prefix}${namespace}-${dead.pid}-${dead.startTime}-Link12`);
    symlinkSync(ofLive, link);

    const removed = await removeFoldersOfEndedCreators([prefix], directory);
    expect(removed.sort()).toEqual([ofDead, ofReusedPid].sort());
    expect(existsSync(ofDead)).toBe(false);
    expect(existsSync(ofReusedPid)).toBe(false);
    for (const kept of [ofLive, ofThisProcess, ofOtherNamespace, unnamed, notAFolder, link])
      expect(existsSync(kept)).toBe(true);
    expect(existsSync(path.join(ofLive, 'append-system-prompt.txt'))).toBe(true);
  });

  it('leaves names with other prefixes alone and never rejects on a missing directory', async () => {
    const dead = await sleeper();
    dead.child.kill('SIGKILL');
    await new Promise((resolve) => dead.child.once('exit', resolve));
    const other = path.join(directory, `tether-other-${namespace}-${dead.pid}-${dead.startTime}-AbC123`);
    mkdirSync(other);
    expect(await removeFoldersOfEndedCreators([prefix], directory)).toEqual([]);
    expect(existsSync(other)).toBe(true);
    expect(await removeFoldersOfEndedCreators([prefix], path.join(directory, 'missing'))).toEqual([]);
  });
});
