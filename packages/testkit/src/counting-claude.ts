import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ClaudeTestEnvironment } from './claude-test-environment.js';

/**
 * What a counting claude does after it logged its start: runs the real binary (`real`); only for the
 * model list's own start, in its temporary folder (`lists-only`: a session's start exits 3); or, a
 * fault the real one will not produce, exits at once (`exits`), never answers (`silent`), or never
 * answers the model list's start only (`silent-lister`), or holds the model list's start until a file
 * `release-lister` is made beside HOME (`held-lister`). Asked its version, every one answers as the
 * real binary does.
 */
export type CountingClaudeBehaviour = 'real' | 'lists-only' | 'exits' | 'silent' | 'silent-lister' | 'held-lister';

/**
 * A claude that writes one line per start (its arguments) to a log, then behaves as asked: the
 * starts a caller can count. Written next to the environment's HOME, named for its behaviour or
 * `name` (a file of its own: what a provider keeps per binary file is not shared with another's).
 */
export async function countingClaude(
  environment: Pick<ClaudeTestEnvironment, 'home' | 'claudePath'>,
  behaviour: CountingClaudeBehaviour = 'real',
  name: string = behaviour,
): Promise<{ readonly path: string; starts(): Promise<string[]> }> {
  const root = path.dirname(environment.home);
  const binary = path.join(root, `claude-${name}`);
  const log = path.join(root, `${path.basename(binary)}.log`);
  const real = `exec '${environment.claudePath}' "$@"`;
  const version = `if [ "$1" = "--version" ]; then ${real}; fi`;
  const behaviours: Record<CountingClaudeBehaviour, string> = {
    real,
    'lists-only': `case "$PWD" in */tether-models-*) ${real};; esac\n${version}\nexit 3`,
    exits: `${version}\nexit 3`,
    silent: `${version}\nexec sleep 600`,
    'silent-lister': `case "$PWD" in */tether-models-*) exec sleep 600;; esac\n${real}`,
    'held-lister': `case "$PWD" in */tether-models-*) while [ ! -e '${path.join(root, 'release-lister')}' ]; do sleep 0.05; done;; esac\n${real}`,
  };
  await writeFile(binary, `#!/bin/sh\necho "$*" >> '${log}'\n${behaviours[behaviour]}\n`);
  await chmod(binary, 0o755);
  return {
    path: binary,
    // `claude --version` (the version check) is not a start of the agent.
    starts: async () =>
      (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((line) => line.includes('stream-json')),
  };
}
