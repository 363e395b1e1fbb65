import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pollUntil } from './poll-until.js';
import {
  environmentIncludes,
  hasProcFilesystem,
  isAlive,
  listProcessIds,
  parseProcessStat,
  readProcessCommandLine,
  readProcessEnvironment,
  readProcessStatus,
  startedWithoutEnvironment,
  lookUpEnvironmentEntry,
} from './proc-filesystem.js';

const started: ChildProcess[] = [];
const directories: string[] = [];

afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function start(
  command: string,
  args: readonly string[],
  environment: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin' },
): ChildProcess & { pid: number } {
  const child = spawn(command, args, { env: environment, stdio: 'ignore' });
  started.push(child);
  if (child.pid === undefined) throw new Error(`${command} did not start`);
  return child as ChildProcess & { pid: number };
}

// 52 fields in today's kernels; only the first 22 matter here.
const statTail =
  'S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0';

describe('parseProcessStat', () => {
  it('reads the fields after the last ")" so a comm with ") (" and spaces cannot shift them', () => {
    expect(parseProcessStat(`4243 (evil) (S 1 2 3) ${statTail}\n`)).toEqual({
      pid: 4243,
      command: 'evil) (S 1 2 3',
      state: 'S',
      parentPid: 1,
      processGroup: 4242,
      session: 4242,
      startTime: 987654,
      cpuTicks: 3,
      waitedChildrenCpuTicks: 0,
    });
  });

  it('keeps an empty comm and a comm of only parentheses', () => {
    expect(parseProcessStat(`7 () ${statTail}`)?.command).toBe('');
    expect(parseProcessStat(`7 ()) ${statTail}`)).toMatchObject({ command: ')', state: 'S', startTime: 987654 });
  });

  it('refuses lines that are not a stat line', () => {
    expect(parseProcessStat('')).toBeUndefined();
    expect(parseProcessStat('garbage')).toBeUndefined();
    expect(parseProcessStat('12 (x) S 1 2')).toBeUndefined();
    expect(parseProcessStat(`x (x) ${statTail}`)).toBeUndefined();
    expect(parseProcessStat(`12 (x) ${statTail.replace('987654', 'nine')}`)).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('reading /proc', () => {
  it('is available on Linux and reads this process', () => {
    expect(hasProcFilesystem()).toBe(true);
    const self = readProcessStatus(process.pid);
    expect(self).toMatchObject({ pid: process.pid, parentPid: process.ppid, state: expect.stringMatching(/^[RS]$/) });
    expect(self!.startTime).toBeGreaterThan(0);
    // Loading the test file alone costs this process more than one clock tick of CPU.
    expect(self!.cpuTicks).toBeGreaterThan(0);
    expect(listProcessIds()).toContain(process.pid);
  });

  it('reads a command line argument by argument', () => {
    const child = start('sleep', ['30', '0']);
    expect(readProcessCommandLine(child.pid)).toEqual(['sleep', '30', '0']);
  });

  it('reads a real process whose name contains ") (" and spaces', async () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'tether-proc-'));
    directories.push(directory);
    // comm is the executable's base name, cut to 15 bytes.
    const strange = path.join(directory, 'a) (b c');
    symlinkSync('/bin/sleep', strange);
    const child = start(strange, ['30']);
    expect(await pollUntil(() => readProcessStatus(child.pid)?.command === 'a) (b c', { timeoutMs: 5_000 })).toBe(true);
    expect(readProcessStatus(child.pid)).toMatchObject({
      pid: child.pid,
      parentPid: process.pid,
      processGroup: readProcessStatus(process.pid)!.processGroup,
    });
  });

  it('reads an environment and matches whole entries only', () => {
    const child = start('sleep', ['30'], {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      TETHER_TEST_ENTRY: 'abc',
      OTHER: 'x=TETHER_TEST_ENTRY=abc',
    });
    expect(readProcessEnvironment(child.pid)).toEqual(
      expect.arrayContaining(['TETHER_TEST_ENTRY=abc', 'OTHER=x=TETHER_TEST_ENTRY=abc']),
    );
    expect(environmentIncludes(child.pid, 'TETHER_TEST_ENTRY=abc')).toBe(true);
    expect(environmentIncludes(child.pid, 'TETHER_TEST_ENTRY=ab')).toBe(false);
    expect(environmentIncludes(child.pid, 'TEST_ENTRY=abc')).toBe(false);
    expect(environmentIncludes(child.pid, 'TETHER_TEST_ENTRY=abcd')).toBe(false);
  });

  it('tells a process started with no environment from one that has one', async () => {
    const bare = start('/usr/bin/env', ['-i', '/bin/sleep', '30'], {});
    const child = start('sleep', ['30'], { PATH: process.env.PATH ?? '/usr/bin:/bin' });
    // Until env's own execve of sleep, env had the (empty) environment it was given, too.
    expect(await pollUntil(() => readProcessStatus(bare.pid)?.command === 'sleep', { timeoutMs: 10_000 })).toBe(true);
    expect(lookUpEnvironmentEntry(bare.pid, 'PATH=/usr/bin:/bin')).toBe('empty');
    expect(startedWithoutEnvironment(bare.pid)).toBe(true);
    expect(startedWithoutEnvironment(child.pid)).toBe(false);
    expect(startedWithoutEnvironment(0)).toBe(false);
  });

  it('says undefined for a pid that does not exist', () => {
    expect(readProcessStatus(0)).toBeUndefined();
    expect(readProcessStatus(-5)).toBeUndefined();
    expect(readProcessEnvironment(0)).toBeUndefined();
    expect(readProcessCommandLine(0)).toBeUndefined();
    expect(environmentIncludes(-1, 'A=b')).toBeUndefined();
  });
});

describe.runIf(process.platform === 'linux')('isAlive', () => {
  it('is true for a running process and false once it has exited and was collected', async () => {
    const child = start('sleep', ['30']);
    expect(isAlive(child.pid)).toBe(true);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    expect(isAlive(child.pid)).toBe(false);
    expect(isAlive(0)).toBe(false);
  });

  it('counts a zombie as dead', async () => {
    // The shell starts a short child, then becomes `sleep 30`, which never waits for it: once the
    // short child ends it stays a zombie for as long as its parent lives.
    const parent = start('sh', ['-c', 'sleep 0.05 & exec sleep 30']);
    let zombie: number | undefined;
    const found = await pollUntil(
      () => {
        zombie = listProcessIds().find((pid) => {
          const status = readProcessStatus(pid);
          return status?.parentPid === parent.pid && status.state === 'Z';
        });
        return zombie !== undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(found).toBe(true);
    expect(readProcessStatus(zombie!)?.state).toBe('Z');
    expect(isAlive(zombie!)).toBe(false);
    expect(isAlive(parent.pid)).toBe(true);
  });
});
