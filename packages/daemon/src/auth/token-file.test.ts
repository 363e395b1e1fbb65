import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearerToken, secretsEqual } from './constant-time.js';
import { ensureToken, readToken, rotateToken, tokenFilePath } from './token-file.js';
import { TokenGuard } from './token-guard.js';

let root: string;
let dataDir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-token-'));
  dataDir = path.join(root, 'data');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

describe('the token file', () => {
  it('is created on first use, private, in a private directory, and kept afterwards', async () => {
    expect(await readToken(dataDir)).toBeNull();
    const { token, replaced } = await ensureToken(dataDir);
    expect(replaced).toBeNull();
    expect(token).toMatch(/^tether_[A-Za-z0-9_-]{43}$/);
    expect(await modeOf(dataDir)).toBe(0o700);
    expect(await modeOf(tokenFilePath(dataDir))).toBe(0o600);
    expect(await ensureToken(dataDir)).toEqual({ token, replaced: null });
    expect(await readToken(dataDir)).toBe(token);
  });

  it('rotation replaces the token atomically and keeps the file private', async () => {
    const first = await ensureToken(dataDir);
    const second = await rotateToken(dataDir);
    expect(second).not.toBe(first);
    expect((await readFile(tokenFilePath(dataDir), 'utf8')).trim()).toBe(second);
    expect(await modeOf(tokenFilePath(dataDir))).toBe(0o600);
  });

  it('is not read once widened: readToken refuses it, and a starting daemon replaces its token', async () => {
    const { token } = await ensureToken(dataDir);
    await chmod(tokenFilePath(dataDir), 0o644);
    await expect(readToken(dataDir)).rejects.toMatchObject({
      code: 'data_dir_unsafe',
      message: expect.stringContaining('tether token --rotate'),
    });
    const started = await ensureToken(dataDir);
    expect(started.replaced).toBe('file_not_private');
    expect(started.token).not.toBe(token);
    expect(await modeOf(tokenFilePath(dataDir))).toBe(0o600);
    expect(await readToken(dataDir)).toBe(started.token);
  });
});

describe('the token guard', () => {
  it('judges every check by the file as it is now, and reports a rotation once', async () => {
    const guard = new TokenGuard(dataDir, (await ensureToken(dataDir)).token);
    const first = guard.token;
    let rotations = 0;
    guard.onRotated(() => (rotations += 1));
    expect(guard.verify(first)).toBe(true);
    expect(guard.verify(`${first}x`)).toBe(false);
    expect(guard.verify(null)).toBe(false);
    const second = await rotateToken(dataDir);
    expect(guard.verify(first)).toBe(false);
    expect(guard.verify(second)).toBe(true);
    expect(rotations).toBe(1);
    // A file emptied by mistake does not lock everyone out or open the door.
    await writeFile(tokenFilePath(dataDir), '');
    expect(guard.verify(second)).toBe(true);
    expect(guard.verify('')).toBe(false);
    // Nor does a token in a file others can read: the token in effect stays.
    await writeFile(tokenFilePath(dataDir), 'tether_widened\n', { mode: 0o644 });
    await chmod(tokenFilePath(dataDir), 0o644);
    expect(guard.verify('tether_widened')).toBe(false);
    expect(guard.verify(second)).toBe(true);
    guard.stop();
  });
});

describe('comparing and parsing', () => {
  it('compares secrets of any length', () => {
    expect(secretsEqual('abc', 'abc')).toBe(true);
    expect(secretsEqual('abc', 'abd')).toBe(false);
    expect(secretsEqual('abc', 'abcd')).toBe(false);
  });

  it('reads only a well-formed Bearer header', () => {
    expect(bearerToken('Bearer tether_abc')).toBe('tether_abc');
    expect(bearerToken('bearer tether_abc')).toBe('tether_abc');
    expect(bearerToken('Basic dXNlcg==')).toBeNull();
    expect(bearerToken('Bearer')).toBeNull();
    expect(bearerToken('Bearer a b')).toBeNull();
    expect(bearerToken(undefined)).toBeNull();
  });
});
