import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { claudeConfigDirectory } from '@tether/provider-claude';

/** One row of `tether doctor`: `warning` is a row that may be fine but could not be confirmed (shown `!`). */
export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly warning?: true;
  readonly detail: string;
  readonly fix?: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Variables that send the agent to another model provider, whose own credentials it then uses. */
const providerSwitches = ['CLAUDE_CODE_USE_BEDROCK', 'CLAUDE_CODE_USE_VERTEX', 'CLAUDE_CODE_USE_FOUNDRY'] as const;

const signInFix =
  'Set ANTHROPIC_API_KEY, or run `claude` once in a terminal and sign in (/login). `tether demo` needs neither.';

function isSet(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function isTruthy(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}

async function readJsonObject(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A sign-in `claude` stored in its config dir: a Claude account's tokens, or a Console API key. */
async function storedLogin(environment: Environment): Promise<string | undefined> {
  // Where the claude CLI keeps its sign-in on Linux and Windows (macOS keeps it in the Keychain).
  const directory = claudeConfigDirectory(environment);
  if (directory === undefined) return undefined;
  const credentialsFile = path.join(directory, '.credentials.json');
  const oauth = (await readJsonObject(credentialsFile))?.claudeAiOauth as Record<string, unknown> | undefined;
  if (typeof oauth?.accessToken === 'string' || typeof oauth?.refreshToken === 'string')
    return `a Claude account login in ${credentialsFile}`;
  // The global config sits next to the config dir (~/.claude.json) unless CLAUDE_CONFIG_DIR moves both.
  const configFile = isSet(environment.CLAUDE_CONFIG_DIR)
    ? path.join(directory, '.claude.json')
    : path.join(path.dirname(directory), '.claude.json');
  if (typeof (await readJsonObject(configFile))?.primaryApiKey === 'string')
    return `an API key saved by \`claude\` login in ${configFile}`;
  return undefined;
}

/**
 * Which credentials the agent would start with, as far as variables and files show. Nothing is
 * sent anywhere, so a row can say a credential is there, never that it works: the detail says
 * what was looked at.
 */
export async function checkCredentials(environment: Environment, platform: NodeJS.Platform): Promise<Check> {
  const name = 'credentials';
  const provider = providerSwitches.find((variable) => isTruthy(environment[variable]));
  if (provider !== undefined)
    return {
      name,
      ok: true,
      detail: `${provider} is set: the agent uses that provider's own credentials (not checked here)`,
    };
  const unchecked = 'set (only its presence is checked: a wrong value fails the first turn)';
  if (isSet(environment.ANTHROPIC_API_KEY)) return { name, ok: true, detail: `ANTHROPIC_API_KEY is ${unchecked}` };
  if (isSet(environment.ANTHROPIC_AUTH_TOKEN))
    return { name, ok: true, detail: `ANTHROPIC_AUTH_TOKEN is ${unchecked}` };
  const login = await storedLogin(environment);
  if (login !== undefined)
    return {
      name,
      ok: true,
      detail: `no ANTHROPIC_API_KEY; found ${login} (not checked: if a turn fails with auth_required, sign in again with \`claude\`)`,
    };
  // Tether takes these out of the agent's environment (an inherited token is not meant for it).
  const strippedToken = isSet(environment.CLAUDE_CODE_OAUTH_TOKEN)
    ? ' CLAUDE_CODE_OAUTH_TOKEN is set, but Tether does not pass it to the agent.'
    : '';
  if (isSet(environment.ANTHROPIC_BASE_URL))
    return {
      name,
      ok: true,
      warning: true,
      detail: `no ANTHROPIC_API_KEY and no claude login found; ANTHROPIC_BASE_URL sends the agent to another endpoint, which may need none (not checked).${strippedToken}`,
      fix: `If turns fail with auth_required: ${signInFix}`,
    };
  if (platform === 'darwin')
    return {
      name,
      ok: true,
      warning: true,
      detail: `no ANTHROPIC_API_KEY, and a claude login would be in the macOS Keychain, which doctor does not read.${strippedToken}`,
      fix: `If turns fail with auth_required: ${signInFix}`,
    };
  const where = claudeConfigDirectory(environment);
  return {
    name,
    ok: false,
    detail: `none found: ANTHROPIC_API_KEY is not set and there is no claude login${where === undefined ? ' (no HOME to look in)' : ` in ${where}`}.${strippedToken}`,
    fix: signInFix,
  };
}
