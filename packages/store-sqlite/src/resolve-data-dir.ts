import { homedir } from 'node:os';
import path from 'node:path';

export interface ResolveDataDirOptions {
  /** An explicit directory (e.g. from --data-dir); wins over everything else. */
  readonly dataDir?: string | undefined;
  /** Where to look up TETHER_HOME; defaults to process.env. */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined;
  /** What a relative directory is relative to; defaults to the process's working directory. */
  readonly cwd?: string | undefined;
}

/** The data directory to use: the explicit option, else TETHER_HOME, else ~/.tether. Always absolute. */
export function resolveDataDir(options: ResolveDataDirOptions = {}): string {
  const given = options.dataDir || (options.environment ?? process.env)['TETHER_HOME'];
  if (!given) return path.join(homedir(), '.tether');
  return resolveGivenPath(given, options.cwd ?? process.cwd());
}

/**
 * A path a user gave (an option, a variable), absolute. A leading `~` is the home directory: a shell
 * leaves it as it is in quotes, in `--cwd=~/x` and in a service file's environment, and a folder named
 * `~` in the working directory is never what was meant (`./~` still names one).
 */
export function resolveGivenPath(given: string, cwd: string): string {
  const expanded = given === '~' || given.startsWith('~/') ? path.join(homedir(), given.slice(1)) : given;
  return path.resolve(cwd, expanded);
}
