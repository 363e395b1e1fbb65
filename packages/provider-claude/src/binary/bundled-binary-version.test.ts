import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { bundledBinaryVersion } from './bundled-binary-version.js';
import { readClaudeVersion } from './probe-binary.js';
import { bundledBinaryPath } from './resolve-binary.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-bundled-version-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

function requireBundled(): string {
  const bundled = bundledBinaryPath();
  if (!bundled) throw new Error('The bundled claude binary is missing: run "./dev npm ci".');
  return bundled;
}

it("reads the bundled binary's version from its package: what the binary itself answers to --version", async () => {
  const bundled = requireBundled();
  const answer = await readClaudeVersion(bundled, { environment: { PATH: '/usr/bin:/bin', HOME: root } });
  if (!('version' in answer)) throw answer.problem;
  const fromPackage = bundledBinaryVersion(bundled);
  expect(fromPackage).toMatch(/^\d+\.\d+\.\d+/);
  expect(answer.version.split(' ')[0]).toBe(fromPackage);
  // A link to it is the same file.
  const link = path.join(root, 'claude');
  await symlink(bundled, link);
  expect(bundledBinaryVersion(link)).toBe(fromPackage);
});

it('reads no version for any other file: that binary is asked', async () => {
  const other = path.join(root, 'claude');
  await writeFile(other, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n");
  await chmod(other, 0o755);
  expect(bundledBinaryVersion(other)).toBeUndefined();
  expect(bundledBinaryVersion(path.join(root, 'missing'))).toBeUndefined();
});
