import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialiseWithPrivatePassword, rootClusterParent } from './embedded-postgres.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'tether-initdb-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('the embedded cluster password file initdb reads', () => {
  it('is written, when not root, in a folder of the data dir that only its owner can enter, removed after', async () => {
    let seen: { folder: string; mode: number } | undefined;
    await initialiseWithPrivatePassword(
      {
        // embedded-postgres writes the password file in os.tmpdir() while initialise() runs.
        initialise: async () => {
          seen = { folder: os.tmpdir(), mode: statSync(os.tmpdir()).mode & 0o777 };
        },
      },
      dataDir,
      false,
    );
    expect(path.dirname(seen!.folder)).toBe(dataDir);
    expect(seen!.mode).toBe(0o700);
    expect(existsSync(seen!.folder)).toBe(false);
    expect(os.tmpdir()).not.toBe(seen!.folder);
  });

  // initdb runs as the postgres user then, and its command line (readable by every user) names the file.
  it.runIf(process.getuid?.() === 0)(
    'is written, as root, in a folder only the postgres user (and root) can enter, removed after',
    async () => {
      await mkdir(rootClusterParent, { recursive: true, mode: 0o711 });
      let seen: { folder: string; mode: number; uid: number } | undefined;
      await initialiseWithPrivatePassword(
        {
          initialise: async () => {
            const found = statSync(os.tmpdir());
            seen = { folder: os.tmpdir(), mode: found.mode & 0o777, uid: found.uid };
          },
        },
        dataDir,
        true,
      );
      expect(path.dirname(seen!.folder)).toBe(rootClusterParent);
      expect(seen!.mode).toBe(0o700);
      expect(seen!.uid).toBe(Number(execFileSync('id', ['-u', 'postgres']).toString().trim()));
      expect(existsSync(seen!.folder)).toBe(false);
    },
  );

  it('is removed with its folder when initdb fails', async () => {
    let folder = '';
    const failing = initialiseWithPrivatePassword(
      {
        initialise: async () => {
          folder = os.tmpdir();
          throw new Error('initdb failed');
        },
      },
      dataDir,
      false,
    );
    await expect(failing).rejects.toThrow('initdb failed');
    expect(existsSync(folder)).toBe(false);
  });
});
