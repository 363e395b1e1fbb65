import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_CLI_MINIMUM_VERSION } from './cli-version-window.js';
import { probeClaudeBinary } from './probe-binary.js';
import { bundledBinaryPath } from './resolve-binary.js';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-probe-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A stand-in claude whose --version prints `output`. */
async function binaryPrinting(output: string): Promise<string> {
  const binary = path.join(root, 'claude');
  await writeFile(binary, `#!/bin/sh\necho '${output}'\n`);
  await chmod(binary, 0o755);
  return binary;
}

const environment = { PATH: '/usr/bin:/bin', HOME: os.tmpdir() };

describe('probeClaudeBinary', () => {
  it('refuses a CLI older than the supported floor: cli_too_old with the version found, the minimum and how to update', async () => {
    const binary = await binaryPrinting('2.0.77 (Claude Code)');
    const availability = await probeClaudeBinary({ explicitPath: binary, environment });
    expect(availability).toMatchObject({
      available: false,
      binaryPath: binary,
      version: '2.0.77 (Claude Code)',
      problem: {
        code: 'provider_unavailable',
        retryable: true,
        details: {
          reason: 'cli_too_old',
          binaryPath: binary,
          installedVersion: '2.0.77',
          minimumVersion: CLAUDE_CLI_MINIMUM_VERSION,
        },
      },
    });
    expect(availability.problem?.message).toContain('claude update');
    expect(availability.problem?.message).toContain('npm install -g @anthropic-ai/claude-code@latest');
  });

  it('accepts the floor itself and anything newer, and does not hold an unreadable version against the binary', async () => {
    for (const output of [
      `${CLAUDE_CLI_MINIMUM_VERSION} (Claude Code)`,
      '2.1.400 (Claude Code)',
      '3.0.0',
      'a development build',
    ]) {
      const binary = await binaryPrinting(output);
      expect(await probeClaudeBinary({ explicitPath: binary, environment })).toMatchObject({
        available: true,
        version: output,
      });
    }
  });

  it('the floor is the version the conformance suite runs against (the bundled binary), which passes', async () => {
    const availability = await probeClaudeBinary({ explicitPath: bundledBinaryPath(), environment });
    expect(availability).toMatchObject({ available: true });
    expect(availability.version?.split(' ')[0]).toBe(CLAUDE_CLI_MINIMUM_VERSION);
  });
});
