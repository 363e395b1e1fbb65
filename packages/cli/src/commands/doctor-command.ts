import { nodeVersionProblem } from '../../bin/node-version-check.js';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import {
  CLAUDE_AGENT_SDK_VERSION,
  CLAUDE_CLI_MINIMUM_VERSION,
  claudeAgentSdkVersionRange,
  createClaudeProvider,
} from '@tether/provider-claude';
import { readDaemonInfo } from '@tether/daemon';
import { AgentError } from '@tether/protocol';
import {
  databaseFileName,
  databaseSchemaRefusal,
  dataDirectoryLockOwner,
  dataDirectoryRefusal,
  resolveDataDir,
  resolveGivenPath,
} from '@tether/store-sqlite';
import type { CliContext } from '../cli-context.js';
import { notADirectory } from '../data-dir-shape.js';
import { type Check, checkCredentials } from './credentials-check.js';
import { checkEndpoint } from './endpoint-check.js';
import { parseTransport } from './transport-option.js';
import { parseCommandLine } from './parse-command-line.js';
import { UsageError } from '../usage-error.js';
import { parseStoreLocation, storeOption } from './store-option.js';
import { storeCheck } from '../open-store.js';

export const doctorUsage =
  'usage: tether doctor [--json] [--data-dir DIR] [--store URL] [--claude-path PATH] [--transport cli|sdk]';

async function checkDataDir(dataDir: string): Promise<Check> {
  const shape = await notADirectory(dataDir);
  if (shape !== null)
    return {
      name: 'data dir',
      ok: false,
      detail: `${dataDir} ${shape}`,
      fix: 'Remove the file or pass --data-dir / TETHER_HOME pointing at a directory.',
    };
  // What every other command would refuse (another user's, writable by others, a foreign link on the way).
  const refusal = dataDirectoryRefusal(dataDir);
  if (refusal !== null) return { name: 'data dir', ok: false, detail: refusal.message };
  try {
    await access(dataDir, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      const parent = await nearestExisting(path.dirname(dataDir));
      if (await writable(parent)) return { name: 'data dir', ok: true, detail: `${dataDir} (created on first use)` };
      return {
        name: 'data dir',
        ok: false,
        detail: `${dataDir} does not exist, and it cannot be made: ${parent} is not writable`,
        fix: 'Choose a directory of your own with --data-dir / TETHER_HOME, or make this one.',
      };
    }
    return {
      name: 'data dir',
      ok: false,
      detail: `${dataDir} is not writable`,
      fix: 'Fix its permissions or choose another with --data-dir / TETHER_HOME.',
    };
  }
  // What every command opening the store would refuse: a database a newer Tether wrote.
  const schema = databaseSchemaRefusal(path.join(dataDir, databaseFileName));
  if (schema !== null) return { name: 'data dir', ok: false, detail: schema.message };
  const owner = dataDirectoryLockOwner(dataDir);
  if (owner?.running) return { name: 'data dir', ok: true, detail: `${dataDir} (in use by process ${owner.pid})` };
  if (owner)
    return {
      name: 'data dir',
      ok: true,
      detail: `${dataDir} (a stale lock from process ${owner.pid} will be taken over)`,
    };
  return { name: 'data dir', ok: true, detail: dataDir };
}

/** The store's row: the store the other commands would open here, or why its location is refused (a row, not a usage error: doctor lists every problem). */
async function storeCheckOf(
  dataDir: string,
  flag: string | undefined,
  environment: Readonly<Record<string, string | undefined>>,
): ReturnType<typeof storeCheck> {
  let location: ReturnType<typeof parseStoreLocation>;
  try {
    location = parseStoreLocation(flag, environment);
  } catch (error) {
    if (error instanceof UsageError) return { ok: false, detail: error.message };
    throw error;
  }
  return storeCheck(dataDir, location);
}

async function writable(folder: string): Promise<boolean> {
  return access(folder, constants.W_OK).then(
    () => true,
    () => false,
  );
}

/** The folder itself, or the closest of its parents that exists (where making it would start). */
async function nearestExisting(folder: string): Promise<string> {
  for (let current = folder; ; current = path.dirname(current)) {
    const there = await access(current).then(
      () => true,
      () => false,
    );
    if (there || path.dirname(current) === current) return current;
  }
}

/** The daemon that owns the data dir, if any. */
async function checkDaemon(dataDir: string, dataDirOk: boolean): Promise<Check> {
  try {
    const daemon = await readDaemonInfo(dataDir);
    return {
      name: 'daemon',
      ok: true,
      detail: daemon
        ? `running at ${daemon.url} (pid ${daemon.pid}); tether run goes through it`
        : 'not running (tether serve starts one; tether run works without it)',
    };
  } catch (error) {
    // The data dir's row already says what is wrong (a file, say) and how to fix it.
    if (!dataDirOk) return { name: 'daemon', ok: true, warning: true, detail: 'unknown until the data dir is fixed' };
    // Doctor lists every problem with its fix: one unreadable file must not hide the other rows.
    return {
      name: 'daemon',
      ok: false,
      detail: `${path.join(dataDir, 'daemon.json')} could not be read: ${(error as Error).message}`,
      fix: AgentError.isInstance(error)
        ? 'Do what the message says.'
        : 'Make it readable for you, or remove it when no tether serve is running.',
    };
  }
}

/** What to do about a claude that is not available, by the problem's reason. */
/** What Claude Code's own `--version` says of it ("2.1.332 (Claude Code)"). */
function namesClaudeCode(version: string | undefined): boolean {
  return version !== undefined && /claude code/i.test(version);
}

function claudeFix(problem: { details?: Record<string, unknown> } | undefined, explicitPath: boolean): string {
  const reason = problem?.details?.reason;
  // The sdk transport's own refusals (package missing or broken) say what to install; the binary was found.
  if (typeof reason === 'string' && reason.startsWith('sdk_'))
    return 'Install the Agent SDK as the message says, or drop --transport sdk.';
  if (reason === 'cli_too_old')
    return 'Update Claude Code: `claude update`, or npm install -g @anthropic-ai/claude-code@latest.';
  // --claude-path wins over TETHER_CLAUDE_PATH: advice to set the variable would change nothing then.
  return explicitPath
    ? 'Give --claude-path the claude executable (or install Claude Code: npm install -g @anthropic-ai/claude-code).'
    : 'Install Claude Code (npm install -g @anthropic-ai/claude-code), or point TETHER_CLAUDE_PATH (or --claude-path) at it.';
}

/** The versions Tether supports: what the conformance suite has passed on. */
function supportedVersions(): Check {
  return {
    name: 'supported',
    ok: true,
    detail: `claude CLI ${CLAUDE_CLI_MINIMUM_VERSION} or newer (tested: ${CLAUDE_CLI_MINIMUM_VERSION}); Agent SDK (--transport sdk) @anthropic-ai/claude-agent-sdk ${claudeAgentSdkVersionRange} (tested: ${CLAUDE_AGENT_SDK_VERSION})`,
  };
}

/** `tether doctor`: what Tether would run with, and what to fix. */
export async function doctorCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const { values } = parseCommandLine(
    argv,
    {
      options: {
        json: { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
        'claude-path': { type: 'string' },
        transport: { type: 'string' },
        ...storeOption,
      },
    },
    doctorUsage,
  );
  const checks: Check[] = [];
  // The one rule bin/tether.js applies before anything loads (so a doctor that runs at all passes it).
  const tooOld = nodeVersionProblem(process.versions.node, false);
  checks.push(
    tooOld === null
      ? { name: 'node', ok: true, detail: `v${process.versions.node}` }
      : { name: 'node', ok: false, detail: `v${process.versions.node}`, fix: tooOld.replace(/^tether: /, '') },
  );

  const claudePath =
    values['claude-path'] === undefined ? undefined : resolveGivenPath(values['claude-path'], context.cwd);
  const transport = parseTransport(values.transport);
  const availability = await createClaudeProvider({
    transport,
    environment: context.environment,
    ...(claudePath ? { claudePath } : {}),
  }).doProbe({ timeoutMs: 10_000 });
  const found = `${availability.version} at ${availability.binaryPath} (found via ${availability.source})${availability.library ? `, driven through ${availability.library.name} ${availability.library.version ?? ''}`.trimEnd() : ''}`;
  checks.push(
    !availability.available
      ? {
          name: 'claude',
          ok: false,
          detail: availability.problem?.message ?? 'not available',
          fix: claudeFix(availability.problem, claudePath !== undefined),
        }
      : namesClaudeCode(availability.version)
        ? { name: 'claude', ok: true, detail: found }
        : {
            // A development build may say something else; any program answers --version, /bin/true too.
            name: 'claude',
            ok: true,
            warning: true,
            detail: `${found}: its --version does not name Claude Code, so this may not be the claude CLI`,
            fix: `Check that ${availability.binaryPath} is Claude Code (\`${availability.binaryPath} --version\` prints "${CLAUDE_CLI_MINIMUM_VERSION} (Claude Code)" or newer), or give the right one with ${claudePath !== undefined ? '--claude-path' : 'TETHER_CLAUDE_PATH or --claude-path'}.`,
          },
  );
  checks.push(supportedVersions());

  checks.push(await checkCredentials(context.environment, process.platform));
  const endpoint = await checkEndpoint(context.environment);
  if (endpoint) checks.push(endpoint);
  if (process.getuid?.() === 0) {
    checks.push({
      name: 'root',
      ok: true,
      detail:
        context.environment.IS_SANDBOX === '1'
          ? 'running as root with IS_SANDBOX=1: bypass mode allowed'
          : 'running as root: the claude CLI refuses bypass mode unless IS_SANDBOX=1 is set',
    });
  }
  const dataDir = resolveDataDir({ dataDir: values['data-dir'], environment: context.environment, cwd: context.cwd });
  const dataDirCheck = await checkDataDir(dataDir);
  checks.push(dataDirCheck);
  // The store the other commands would open here: PostgreSQL (--store, TETHER_STORE_URL), or a data
  // dir whose sessions are there, opened without it.
  const store = await storeCheckOf(dataDir, values.store, context.environment);
  if (store !== null)
    checks.push({ name: 'store', ...store, ...(store.ok ? {} : { fix: 'Do what the message says.' }) });
  checks.push(await checkDaemon(dataDir, dataDirCheck.ok));

  if (values.json) {
    context.stdout.write(`${JSON.stringify({ ok: checks.every((check) => check.ok), checks })}\n`);
  } else {
    for (const check of checks) {
      const mark = !check.ok ? '✗' : check.warning ? '!' : '✓';
      context.stdout.write(`${mark} ${check.name.padEnd(12)} ${check.detail}\n`);
      if (check.fix) context.stdout.write(`  ${' '.repeat(12)} fix: ${check.fix}\n`);
    }
  }
  return checks.every((check) => check.ok) ? 0 : 1;
}
