import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../usage-error.js';

/** A command's arguments, parsed strictly; an unknown or malformed option is a UsageError that ends with `usage`. */
export function parseCommandLine<const Config extends Omit<ParseArgsConfig, 'args' | 'strict'>>(
  argv: readonly string[],
  config: Config,
  usage: string,
) {
  try {
    return parseArgs({ ...config, args: [...argv], strict: true as const });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n\n${usage}`);
  }
}
