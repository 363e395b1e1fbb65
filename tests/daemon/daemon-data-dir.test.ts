// The data directory against other local users: what the daemon and local commands trust in it, and
// what they refuse (docs/security.md, "Other users on the machine").
import { spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lchownSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { readDaemonInfo, readToken, rotateToken } from '@tether/daemon';
import { readProcessStatus } from '@tether/provider-claude/test-support';
import { type ClaudeTestEnvironment, agentErrorOf, createGitRepository } from '@tether/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { client, commandId, daemonPerTest, dataDirOf } from './daemon-test-helpers.js';

const fixture = daemonPerTest();

const otherUserNeedsRoot = () => {
  // Making a file another user's needs root (CI and the development machines run as root): without it
  // these tests fail, saying so, rather than skip and hide the defence they prove.
  if (process.getuid?.() !== 0)
    throw new Error('This test gives a file to another user (chown), which needs root: run the suite as root.');
};
const otherUid = 65534;
const planted = 'tether_planted-by-another-user';

function modeOf(filePath: string): number {
  return statSync(filePath).mode & 0o777;
}

/** The data directory as a first daemon would leave it (private), before the test tampers with it. */
async function privateDataDir(environment: ClaudeTestEnvironment): Promise<string> {
  const dataDir = dataDirOf(environment);
  await rotateToken(dataDir);
  return dataDir;
}

describe('the data directory', () => {
  it('is created 0700 with its token 0600', async () => {
    const { environment } = await fixture.start();
    const dataDir = dataDirOf(environment);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(path.join(dataDir, 'daemon-token'))).toBe(0o600);
    expect(modeOf(path.join(dataDir, 'daemon.json'))).toBe(0o600);
  });

  it('is refused when others can write in it (0777): the message says to check it and chmod 700, and nothing is written', async () => {
    const environment = await fixture.environment();
    const dataDir = dataDirOf(environment);
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o777);
    const error = await agentErrorOf(fixture.daemonOn(environment));
    expect(error.code).toBe('data_dir_unsafe');
    expect(error.details?.reason).toBe('data_dir_writable');
    expect(error.message).toContain(`chmod 700 ${dataDir}`);
    expect(error.message).toContain('Check its contents');
    expect(existsSync(path.join(dataDir, 'daemon-token'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'tether.db'))).toBe(false);
    expect(modeOf(dataDir)).toBe(0o777);
    // Local commands refuse it too: no token is written where others could read or replace it.
    expect((await agentErrorOf(rotateToken(dataDir))).code).toBe('data_dir_unsafe');
  });

  it('of ours that others can only read (0755) is tightened to 0700', async () => {
    const environment = await fixture.environment();
    const dataDir = dataDirOf(environment);
    mkdirSync(dataDir);
    chmodSync(dataDir, 0o755);
    await fixture.daemonOn(environment);
    expect(modeOf(dataDir)).toBe(0o700);
  });

  it('is refused when another user owns it, even with mode 0700', async () => {
    otherUserNeedsRoot();
    const environment = await fixture.environment();
    const dataDir = dataDirOf(environment);
    mkdirSync(dataDir, { mode: 0o700 });
    chownSync(dataDir, otherUid, otherUid);
    const error = await agentErrorOf(fixture.daemonOn(environment));
    expect(error).toMatchObject({ code: 'data_dir_unsafe', details: { reason: 'data_dir_foreign' } });
    expect(error.message).toContain(`owned by uid ${otherUid}`);
    expect(error.message).toContain('--data-dir');
  });

  it("is refused when reached through another user's symbolic link (they could point it elsewhere later); one of ours is followed", async () => {
    otherUserNeedsRoot();
    const environment = await fixture.environment();
    const dataDir = dataDirOf(environment);
    const target = path.join(environment.home, 'real-data');
    mkdirSync(target, { mode: 0o700 });
    symlinkSync(target, dataDir);
    lchownSync(dataDir, otherUid, otherUid);
    const error = await agentErrorOf(fixture.daemonOn(environment));
    expect(error).toMatchObject({ code: 'data_dir_unsafe', details: { reason: 'data_dir_foreign' } });
    expect(error.message).toContain(`a symbolic link owned by uid ${otherUid}`);
    expect(readdirSync(target)).toEqual([]);

    lchownSync(dataDir, process.getuid!(), process.getgid!());
    await fixture.daemonOn(environment);
    expect(existsSync(path.join(target, 'daemon-token'))).toBe(true);
  });

  it('is refused inside a folder every user may write in without the sticky bit', async () => {
    const environment = await fixture.environment();
    const shared = path.join(environment.home, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const dataDir = path.join(shared, 'data');
    const error = await agentErrorOf(fixture.daemonOn(environment, { dataDir }));
    expect(error).toMatchObject({ code: 'data_dir_unsafe', details: { reason: 'data_dir_path_writable' } });
    expect(error.message).toContain(`lies in ${shared}, which every user may write in`);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('files another user wrote', () => {
  beforeEach(otherUserNeedsRoot);
  it('a planted token file is never used: the daemon replaces it, the planted token gets 401, and local commands refuse to read it', async () => {
    const environment = await fixture.environment();
    const dataDir = await privateDataDir(environment);
    const tokenPath = path.join(dataDir, 'daemon-token');
    writeFileSync(tokenPath, `${planted}\n`);
    chmodSync(tokenPath, 0o600);
    chownSync(tokenPath, otherUid, otherUid);
    const error = await agentErrorOf(readToken(dataDir));
    expect(error).toMatchObject({ code: 'data_dir_unsafe', details: { reason: 'file_foreign' } });
    expect(error.message).toContain('tether token --rotate');

    const daemon = await fixture.daemonOn(environment);
    expect(daemon.token).not.toBe(planted);
    expect((await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${planted}` } })).status).toBe(
      401,
    );
    expect((await client(daemon).request('GET', '/v1/sessions')).status).toBe(200);
    expect(statSync(tokenPath)).toMatchObject({ uid: process.getuid!() });
    expect(await readToken(dataDir)).toBe(daemon.token);
  });

  it('a token file swapped for a planted one while the daemon runs changes nothing', async () => {
    const { environment, daemon, api } = await fixture.start();
    const tokenPath = path.join(dataDirOf(environment), 'daemon-token');
    const swapped = `${tokenPath}.swap`;
    writeFileSync(swapped, `${planted}\n`, { mode: 0o600 });
    chownSync(swapped, otherUid, otherUid);
    renameSync(swapped, tokenPath);
    expect((await fetch(`${daemon.url}/v1/sessions`, { headers: { authorization: `Bearer ${planted}` } })).status).toBe(
      401,
    );
    expect((await api.request('GET', '/v1/sessions')).status).toBe(200);
  });

  it('a daemon.json another user wrote is refused, so no local command sends the token to the address it names', async () => {
    const environment = await fixture.environment();
    const dataDir = await privateDataDir(environment);
    const infoPath = path.join(dataDir, 'daemon.json');
    writeFileSync(
      infoPath,
      JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid, startedAt: new Date().toISOString() }),
      { mode: 0o600 },
    );
    chownSync(infoPath, otherUid, otherUid);
    const error = await agentErrorOf(readDaemonInfo(dataDir));
    expect(error).toMatchObject({ code: 'data_dir_unsafe', details: { reason: 'file_foreign' } });
    expect(error.message).toContain('Remove it');
    // Ours, but writable by others: refused the same way.
    chownSync(infoPath, process.getuid!(), process.getgid!());
    chmodSync(infoPath, 0o666);
    expect((await agentErrorOf(readDaemonInfo(dataDir))).details?.reason).toBe('file_not_private');
  });

  it('a lock file another user wrote is refused instead of keeping the daemon out', async () => {
    const environment = await fixture.environment();
    const dataDir = await privateDataDir(environment);
    const lockPath = path.join(dataDir, 'tether.lock');
    writeFileSync(lockPath, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() }), { mode: 0o600 });
    chownSync(lockPath, otherUid, otherUid);
    const error = await agentErrorOf(fixture.daemonOn(environment));
    expect(error).toMatchObject({ code: 'data_dir_unsafe', details: { reason: 'file_foreign' } });
    expect(error.message).toContain(lockPath);
  });
});

describe('the worktree root (--worktree-root)', () => {
  // Whoever can write in it can rename a session's worktree away and put a folder of their own in its
  // place: the agent then starts there, and runs the hooks its .claude settings name, as this user.
  it('is refused when others can write in it or another user owns it, and tightened to 0700 when others can only read it', async () => {
    otherUserNeedsRoot();
    const environment = await fixture.environment();
    const repository = path.join(environment.home, 'repository');
    await createGitRepository(repository, { 'notes.txt': 'hello\n' }, environment.environment);
    const worktreeRoot = path.join(environment.home, 'worktrees');
    mkdirSync(worktreeRoot);
    chmodSync(worktreeRoot, 0o777);
    const daemon = await fixture.daemonOn(environment, { worktreeRoot });
    const api = client(daemon);
    const openWorktree = () =>
      api.request('POST', '/v1/commands', {
        body: { type: 'open_session', commandId: commandId(), workspace: { kind: 'git_worktree', repository } },
      });

    const writable = await openWorktree();
    expect(writable.status).toBe(400);
    const refusal = ((await writable.json()) as { error: { code: string; message: string; details: unknown } }).error;
    expect(refusal).toMatchObject({ code: 'invalid_workspace', details: { reason: 'worktree_root_unsafe' } });
    expect(refusal.message).toContain(`chmod 700 ${worktreeRoot}`);
    expect(readdirSync(worktreeRoot)).toEqual([]);
    expect(await (await api.request('GET', '/v1/sessions')).json()).toMatchObject({ sessions: [] });

    chownSync(worktreeRoot, otherUid, otherUid);
    chmodSync(worktreeRoot, 0o700);
    const foreign = await openWorktree();
    expect(foreign.status).toBe(400);
    expect(((await foreign.json()) as { error: { message: string } }).error.message).toContain(
      `owned by uid ${otherUid}`,
    );

    chownSync(worktreeRoot, process.getuid!(), process.getgid!());
    chmodSync(worktreeRoot, 0o755);
    expect((await openWorktree()).status).toBe(200);
    expect(modeOf(worktreeRoot)).toBe(0o700);
    expect(readdirSync(worktreeRoot)).toHaveLength(1);
  });
});

describe('a stale lock', () => {
  it('naming a live pid that started at another time (a reused pid) is taken over; with its real start time it holds', async () => {
    const environment = await fixture.environment();
    const dataDir = await privateDataDir(environment);
    const lockPath = path.join(dataDir, 'tether.lock');
    // An unrelated live process: the pid a dead daemon's lock names, reused.
    const unrelated = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => unrelated.once('spawn', resolve));
      const realStart = readProcessStatus(unrelated.pid!)?.startTime;
      expect(realStart).toBeDefined();
      const writeLock = (startTicks: number) =>
        writeFileSync(
          lockPath,
          JSON.stringify({ pid: unrelated.pid, startedAt: '2026-01-01T00:00:00.000Z', startTicks }),
          { mode: 0o600 },
        );

      writeLock(realStart!);
      const held = await agentErrorOf(fixture.daemonOn(environment));
      expect(held).toMatchObject({ code: 'data_dir_in_use', details: { ownerPid: unrelated.pid } });

      writeLock(realStart! - 1);
      const daemon = await fixture.daemonOn(environment);
      expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({
        pid: process.pid,
        startTicks: readProcessStatus(process.pid)!.startTime,
      });
      expect((await client(daemon).request('GET', '/v1/sessions')).status).toBe(200);
    } finally {
      unrelated.kill('SIGKILL');
    }
  });

  it('a daemon.json naming a live pid that does not own the data directory (a reused pid) names no daemon', async () => {
    const environment = await fixture.environment();
    const dataDir = await privateDataDir(environment);
    const unrelated = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => unrelated.once('spawn', resolve));
      const info = { url: 'http://127.0.0.1:9', pid: unrelated.pid, startedAt: '2026-01-01T00:00:00.000Z' };
      writeFileSync(path.join(dataDir, 'daemon.json'), JSON.stringify(info), { mode: 0o600 });
      expect(await readDaemonInfo(dataDir)).toBeNull();
      // The same pid holding the data directory's lock (with its real start time) is the daemon.
      const startTicks = readProcessStatus(unrelated.pid!)!.startTime;
      writeFileSync(
        path.join(dataDir, 'tether.lock'),
        JSON.stringify({ pid: unrelated.pid, startedAt: info.startedAt, startTicks }),
        { mode: 0o600 },
      );
      expect(await readDaemonInfo(dataDir)).toEqual(info);
    } finally {
      unrelated.kill('SIGKILL');
    }
  });
});
