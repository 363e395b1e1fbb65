import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { checkedVersion, rememberVersionCheckPassed, versionCheckPassed } from './checked-binaries.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-checked-binaries-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

it('remembers a passed check for the same file, and forgets it once the file is replaced', async () => {
  const binary = path.join(root, 'claude');
  await writeFile(binary, "#!/bin/sh\necho '2.1.332 (Claude Code)'\n");
  expect(versionCheckPassed(binary)).toBe(false);
  expect(checkedVersion(binary)).toBeNull();
  rememberVersionCheckPassed(binary, '2.1.332 (Claude Code)');
  expect(versionCheckPassed(binary)).toBe(true);
  expect(checkedVersion(binary)).toBe('2.1.332');
  await rm(binary);
  await writeFile(binary, "#!/bin/sh\necho '2.0.5 (Claude Code)'\n");
  expect(versionCheckPassed(binary)).toBe(false);
  expect(checkedVersion(binary)).toBeNull();
  expect(versionCheckPassed(path.join(root, 'missing'))).toBe(false);
});
