import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runChildScript, startChildScript, type ChildScript } from './__fixtures__/child-script.js';
import { makeTemporaryDirectory } from './__fixtures__/temporary-directory.js';
import { dataDirectoryLockOwner, parseLockOwner, processStartTicks } from './data-directory-lock.js';
import { openSqliteStore } from './index.js';
import { agentErrorOf } from '@tether/testkit';

const lockModuleUrl = pathToFileURL(fileURLToPath(new URL('./data-directory-lock.ts', import.meta.url))).href;

let directory: Awaited<ReturnType<typeof makeTemporaryDirectory>>;
let dataDir: string;
let lockPath: string;
beforeEach(async () => {
  directory = await makeTemporaryDirectory();
  dataDir = directory.path;
  lockPath = path.join(dataDir, 'tether.lock');
});
afterEach(async () => {
  await directory.remove();
});

/**
 * A second process that takes the data directory with this package's own lock code, prints
 * "acquired" or "refused", and lets go when its stdin ends. With `onSignal` it first waits for
 * a line on stdin, so that several can be started and then let loose at once.
 */
function lockHolderScript(options: { exitWithoutRelease?: boolean; onSignal?: boolean } = {}): string {
  return `
    import { acquireDataDirectoryLock } from ${JSON.stringify(lockModuleUrl)};
    import { once } from 'node:events';
    process.stdin.setEncoding('utf8');
    if (${options.onSignal === true}) { process.stdout.write('waiting\\n'); await once(process.stdin, 'data'); }
    const attempt = acquireDataDirectoryLock(${JSON.stringify(dataDir)});
    ${options.exitWithoutRelease ? 'process.exit(attempt.acquired ? 0 : 3);' : ''}
    process.stdout.write(attempt.acquired ? 'acquired\\n' : 'refused\\n');
    process.stdin.resume();
    process.stdin.on('end', () => { if (attempt.acquired) attempt.lock.release(); process.exit(0); });
  `;
}

async function startLockHolder(): Promise<ChildScript> {
  const holder = startChildScript(lockHolderScript());
  expect(await holder.waitForLine((line) => line === 'acquired' || line === 'refused')).toBe('acquired');
  return holder;
}

/** A lock file as an earlier process of this user would have left it (private: others' locks are refused, see tests/daemon). */
function writeLock(text: string): void {
  writeFileSync(lockPath, text, { mode: 0o600 });
}

async function openAndClose(): Promise<void> {
  const store = await openSqliteStore({ dataDir });
  expect(parseLockOwner(readFileSync(lockPath, 'utf8'))).toBe(process.pid);
  await store.close();
  expect(existsSync(lockPath), 'close removes the lock').toBe(false);
}

describe('one runtime per data directory', () => {
  it('refuses a directory another process holds, naming that process', async () => {
    const holder = await startLockHolder();
    try {
      const error = await agentErrorOf(openSqliteStore({ dataDir }));
      expect(error.code).toBe('data_dir_in_use');
      expect(error.details?.ownerPid).toBe(holder.pid);
      expect(error.message).toContain(`pid ${holder.pid}`);
      expect(error.message).toContain('--data-dir');
    } finally {
      expect(await holder.stop()).toBe(0);
    }
    await openAndClose();
  });

  it('does not take a copy of a held data directory (cp -a while its owner runs) for that owner: its lock is stale there', async () => {
    const holder = await startLockHolder();
    const copy = await makeTemporaryDirectory();
    try {
      execFileSync('cp', ['-a', `${dataDir}/.`, copy.path]);
      expect(parseLockOwner(readFileSync(path.join(copy.path, 'tether.lock'), 'utf8'))).toBe(holder.pid);
      expect(dataDirectoryLockOwner(copy.path)).toEqual({ pid: holder.pid, running: false });
      expect(dataDirectoryLockOwner(dataDir)).toEqual({ pid: holder.pid, running: true });
      const store = await openSqliteStore({ dataDir: copy.path });
      expect(parseLockOwner(readFileSync(path.join(copy.path, 'tether.lock'), 'utf8'))).toBe(process.pid);
      await store.close();
      // The original is still its owner's.
      expect((await agentErrorOf(openSqliteStore({ dataDir }))).code).toBe('data_dir_in_use');
    } finally {
      expect(await holder.stop()).toBe(0);
      await copy.remove();
    }
  });

  it("keeps a live owner's lock whose file is numbered anew in its own directory (as some network and FUSE file systems do): not a copy", async () => {
    const holder = await startLockHolder();
    try {
      // The same text in a new file (a new inode) at the same path.
      const text = readFileSync(lockPath, 'utf8');
      writeFileSync(`${lockPath}.new`, text, { mode: 0o600 });
      renameSync(`${lockPath}.new`, lockPath);
      expect(dataDirectoryLockOwner(dataDir)).toEqual({ pid: holder.pid, running: true });
      expect((await agentErrorOf(openSqliteStore({ dataDir }))).code).toBe('data_dir_in_use');
    } finally {
      expect(await holder.stop()).toBe(0);
    }
  });

  it('refuses a second open in the same process until the first is closed', async () => {
    const store = await openSqliteStore({ dataDir });
    const error = await agentErrorOf(openSqliteStore({ dataDir: path.join(dataDir, '.') }));
    expect(error.code).toBe('data_dir_in_use');
    expect(error.details?.ownerPid).toBe(process.pid);
    expect(await store.loadSessions(), 'the refused open left the first store working').toEqual([]);
    await store.close();
    await openAndClose();
  });

  it('takes over a lock whose owner is no longer running', async () => {
    const dead = await runChildScript('');
    writeLock(JSON.stringify({ pid: dead.pid, startedAt: '2025-01-01T00:00:00.000Z' }));
    await openAndClose();
  });

  it('takes over a lock left under this very pid by an earlier process, or not written by Tether', async () => {
    writeLock(JSON.stringify({ pid: process.pid }));
    await openAndClose();
    writeLock('garbage');
    await openAndClose();
  });

  it('lets exactly one of several processes racing for a stale lock take it over', async () => {
    const dead = await runChildScript('');
    writeLock(JSON.stringify({ pid: dead.pid }));
    const racers = Array.from({ length: 6 }, () => startChildScript(lockHolderScript({ onSignal: true })));
    try {
      await Promise.all(racers.map((racer) => racer.waitForLine((line) => line === 'waiting')));
      for (const racer of racers) racer.send('go\n');
      const outcomes = await Promise.all(
        racers.map((racer) => racer.waitForLine((line) => line === 'acquired' || line === 'refused')),
      );
      expect(outcomes.filter((outcome) => outcome === 'acquired')).toHaveLength(1);
      const winner = racers[outcomes.indexOf('acquired')]!;
      expect(parseLockOwner(readFileSync(lockPath, 'utf8'))).toBe(winner.pid);
    } finally {
      await Promise.all(racers.map((racer) => racer.stop()));
    }
    expect(readdirSync(dataDir), 'no temporary or takeover files are left behind').toEqual([]);
  });

  it('loses no lock file when its owner exits without closing', async () => {
    const exited = await runChildScript(lockHolderScript({ exitWithoutRelease: true }));
    expect(exited.code, exited.stderr).toBe(0);
    expect(existsSync(lockPath)).toBe(false);
    await openAndClose();
  });

  it('takes over a lock whose owner was killed and not yet reaped (a zombie still answers signal 0)', async () => {
    // The background child exits soon, once its parent has exec'd into sleep, which never waits for it
    // (one that exited at once could be reaped by the shell before the exec).
    const parent = spawn('sh', ['-c', 'sleep 0.3 & echo $!; exec sleep 600'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const [line] = (await once(parent.stdout!.setEncoding('utf8'), 'data')) as [string];
      const zombie = Number(line.trim());
      const stateOf = () => {
        const stat = readFileSync(`/proc/${zombie}/stat`, 'utf8');
        return stat.slice(stat.lastIndexOf(')') + 2)[0];
      };
      await expect.poll(stateOf, { timeout: 10_000 }).toBe('Z');
      writeLock(JSON.stringify({ pid: zombie, startTicks: processStartTicks(zombie) }));
      await openAndClose();
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('refuses a database another process holds even without the lock file', async () => {
    await openAndClose();
    const holder = startChildScript(`
      import { DatabaseSync } from 'node:sqlite';
      const database = new DatabaseSync(${JSON.stringify(path.join(dataDir, 'tether.db'))});
      database.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN IMMEDIATE; COMMIT;');
      process.stdout.write('ready\\n');
      process.stdin.resume();
      process.stdin.on('end', () => { database.close(); process.exit(0); });
    `);
    await holder.waitForLine((line) => line === 'ready');
    try {
      const error = await agentErrorOf(openSqliteStore({ dataDir }));
      expect(error.code).toBe('data_dir_in_use');
      expect(existsSync(lockPath), 'the refused open let go of the lock file').toBe(false);
    } finally {
      expect(await holder.stop()).toBe(0);
    }
    await openAndClose();
  });

  it('holds the database itself, so a process that ignores the lock file can neither read nor write it', async () => {
    const store = await openSqliteStore({ dataDir });
    try {
      const intruder = await runChildScript(`
        import { DatabaseSync } from 'node:sqlite';
        const database = new DatabaseSync(${JSON.stringify(path.join(dataDir, 'tether.db'))}, { timeout: 0 });
        try { database.prepare('SELECT count(*) FROM sessions').get(); } catch (error) { console.error(error.errstr); process.exit(5); }
      `);
      expect(intruder.code).toBe(5);
      expect(intruder.stderr).toContain('database is locked');
    } finally {
      await store.close();
    }
  });
});
