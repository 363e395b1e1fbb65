import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeVersionProblem } from '../bin/node-version-check.js';
import { spawnTether } from './test-support/spawn-tether.js';

/**
 * An older Node to run bin/tether.js with: TETHER_TEST_OLD_NODE, or the system one (Debian's is 20).
 * The pure check below is what proves the rule; this proves the file loads and speaks first on a
 * real old runtime, which only a machine that has one can show.
 */
function oldNode(): string | null {
  const candidate = process.env.TETHER_TEST_OLD_NODE ?? '/usr/bin/node';
  if (!existsSync(candidate)) return null;
  const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  return nodeVersionProblem(version, false) === null ? null : candidate;
}

describe('the Node version check of bin/tether.js', () => {
  it('accepts 22.13 and newer (22.12 cannot load node:sqlite), refuses anything older, saying what was found and what to do', () => {
    for (const version of ['22.13.0', '22.13.1', '22.20.0', '23.0.0', '24.1.0', '100.0.0'])
      expect(nodeVersionProblem(version, false), version).toBeNull();
    for (const version of ['22.12.0', '22.11.0', '22.0.0', '21.9.9', '20.20.2', '18.19.0', '12.0.0']) {
      const problem = nodeVersionProblem(version, false);
      expect(problem, version).toContain('Tether needs Node.js >= 22.13');
      expect(problem).toContain(`Node.js ${version}`);
      expect(problem).toContain('Install Node.js 22.13 or newer');
      expect(problem).not.toContain('\n');
    }
    expect(nodeVersionProblem('20.20.2', true)).toContain('run it through ./dev');
  });

  const node = oldNode();
  // In CI (whose machine has Debian's Node 20) a missing old Node fails this test; elsewhere it is skipped by name.
  it.runIf(node !== null || process.env.CI !== undefined)(
    `on a real Node older than 22.13 (${node ?? 'none on this machine: TETHER_TEST_OLD_NODE'}): one clear line and exit 1, no stack trace`,
    async () => {
      if (node === null)
        throw new Error("No Node older than 22.13 found: install Debian's nodejs or set TETHER_TEST_OLD_NODE.");
      const { finished } = spawnTether(['run', 'hello'], {
        cwd: process.cwd(),
        environment: { PATH: '/usr/bin:/bin' },
        node,
      });
      const result = await finished;
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^tether: Tether needs Node\.js >= 22\.13, but this is Node\.js \d+\.\d+\.\d+ /);
      // This checkout has ./dev: the line says to use it.
      expect(result.stderr).toContain('./dev');
      expect(result.stderr).not.toContain('ERR_UNKNOWN_BUILTIN_MODULE');
    },
  );
});
