import { readToken, rotateToken } from '@tether/daemon';
import { resolveDataDir } from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { parseCommandLine } from './parse-command-line.js';

export const tokenUsage = 'usage: tether token [--rotate] [--data-dir DIR]';

/** `tether token`: the daemon's token for this data dir; --rotate replaces it (the old one stops working at once). */
export async function tokenCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseCommandLine(
    argv,
    {
      options: { rotate: { type: 'boolean', default: false }, 'data-dir': { type: 'string' } },
    },
    tokenUsage,
  );
  const dataDir = resolveDataDir({ dataDir: values['data-dir'], environment: context.environment, cwd: context.cwd });
  const token = values.rotate ? await rotateToken(dataDir) : await readToken(dataDir);
  if (!token) {
    context.stderr.write(
      `tether token: no token yet in ${dataDir}; \`tether serve\` creates one on its first start.\n`,
    );
    return 1;
  }
  context.stdout.write(`${token}\n`);
  return 0;
}
