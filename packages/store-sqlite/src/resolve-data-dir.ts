import { homedir } from 'node:os';
import path from 'node:path';

export interface ResolveDataDirOptions {
  /** An explicit directory (e.g. from --data-dir); wins over everything else. */
  readonly dataDir?: string | undefined;
  /** Where to look up TETHER_HOME; defaults to process.env. */
  readonly environment?: Readonly<Record<string, string | undefined>> | undefined;
}

/** The data directory to use: the explicit option, else TETHER_HOME, else ~/.tether. Always absolute. */
export function resolveDataDir(options: ResolveDataDirOptions = {}): string {
  if (options.dataDir) return path.resolve(options.dataDir);
  const fromEnvironment = (options.environment ?? process.env)['TETHER_HOME'];
  if (fromEnvironment) return path.resolve(fromEnvironment);
  return path.join(homedir(), '.tether');
}
