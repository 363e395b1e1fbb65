import { z } from 'zod';
import { PermissionMode } from './permission-mode.js';

/**
 * Why a configuration was refused, in `details.reason` of the invalid_command error: stable
 * values a host can branch on (the issues list says which field).
 */
export type ConfigurationRefusal =
  | 'inline_json'
  | 'nul_character'
  | 'too_large'
  | 'environment_too_many'
  | 'environment_too_large'
  | 'configuration_too_large';

/** A refinement whose failure carries a ConfigurationRefusal (parseCommand reports it as details.reason). */
function refusal(reason: ConfigurationRefusal, message: string) {
  return { message, params: { reason } };
}

const utf8 = new TextEncoder();

/** Bytes the value takes on a command line or in an environment block (the kernel counts bytes, not characters). */
function utf8Bytes(value: string): number {
  return utf8.encode(value).length;
}

/**
 * Linux refuses (E2BIG) any single argument or environment entry over 128 KiB, and a launch whose
 * arguments and environment together pass ARG_MAX (usually 2 MiB, shared with the host's own
 * environment). These bounds keep a session's part of that well inside both.
 */
export const configurationLimits = {
  /** UTF-8 bytes of appendSystemPrompt: one argument. */
  appendSystemPromptBytes: 100_000,
  /** Variables in `environment`. */
  environmentVariables: 100,
  /** UTF-8 bytes of `environment` as the child gets it: every NAME=value with its terminator. */
  environmentBytes: 100_000,
  /**
   * UTF-8 bytes of every value together (arguments and NAME=value): half of the usual ARG_MAX,
   * the rest being the host's inherited environment and Tether's own flags.
   */
  totalBytes: 1024 * 1024,
} as const;

const noNul = refusal('nul_character', 'must not contain NUL');

/** A value that can never be mistaken for a command-line flag. */
const argumentValue = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => !value.startsWith('-'), 'must not start with "-"')
  .refine((value) => !value.includes('\0'), noNul);

// biome-ignore lint/suspicious/noControlCharactersInRegex: a model name holds no control character.
const notAModelName = /[\s\u0000-\u001f\u007f]/;

// Says which rule the name broke: "a model name" alone left whoever typed "claude sonnet" guessing.
const modelNameRule =
  'a model name or alias is one word: no space or control character, and no leading "-" (e.g. "sonnet")';

/** A model name or alias, as open_session's configuration and set_model take it: one word, never a flag. */
export const modelName = z
  .string()
  .min(1)
  .max(200)
  .refine((value) => !value.includes('\0'), noNul)
  .refine((value) => !value.startsWith('-') && !notAModelName.test(value), modelNameRule);

const toolRule = argumentValue.refine((value) => !/[\r\n]/.test(value), 'must be a single line');

/**
 * A path to a JSON file. The CLI also takes the JSON itself in these flags (a value that starts
 * with "{" once trimmed), and inline settings could install hooks that run commands with no
 * approval: only paths are accepted (name a file that starts with "{" as "./{…").
 */
const configurationFilePath = argumentValue.refine(
  (value) => !/^[{[]/.test(value.trim()),
  refusal(
    'inline_json',
    'must be the path of a JSON file; inline JSON is refused (write it to a file and pass its path)',
  ),
);

const appendSystemPrompt = z
  .string()
  .min(1)
  .max(configurationLimits.appendSystemPromptBytes)
  .refine((value) => !value.includes('\0'), noNul)
  .refine(
    (value) => utf8Bytes(value) <= configurationLimits.appendSystemPromptBytes,
    refusal(
      'too_large',
      `must be at most ${configurationLimits.appendSystemPromptBytes.toLocaleString('en')} bytes in UTF-8`,
    ),
  );

export const EnvironmentVariableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

const environment = z
  .record(
    EnvironmentVariableName,
    z
      .string()
      .max(configurationLimits.environmentBytes)
      .refine((value) => !value.includes('\0'), noNul),
  )
  .check((context) => {
    const entries = Object.entries(context.value);
    if (entries.length > configurationLimits.environmentVariables) {
      context.issues.push({
        code: 'custom',
        input: undefined,
        ...refusal(
          'environment_too_many',
          `at most ${configurationLimits.environmentVariables} variables; this has ${entries.length}`,
        ),
      });
      return;
    }
    const bytes = entries.reduce((sum, [name, value]) => sum + utf8Bytes(name) + utf8Bytes(value) + 2, 0);
    if (bytes > configurationLimits.environmentBytes) {
      context.issues.push({
        code: 'custom',
        input: undefined,
        ...refusal(
          'environment_too_large',
          `at most ${configurationLimits.environmentBytes.toLocaleString('en')} bytes in all (NAME=value, UTF-8); this has ${bytes.toLocaleString('en')}`,
        ),
      });
    }
  });

export const Effort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
export type Effort = z.infer<typeof Effort>;

/**
 * Typed session configuration. Never raw CLI arguments: a provider maps each field to its own
 * flags, and nothing here can override a flag the provider controls.
 */
export const SessionConfiguration = z.strictObject({
  /** A model name or alias; omitted or "default" means the provider's own default. */
  model: modelName.optional(),
  effort: Effort.optional(),
  /** A named agent definition the provider knows. */
  agent: argumentValue.max(200).optional(),
  /** Omitted means the user's configured default. */
  permissionMode: PermissionMode.optional(),
  /** A settings file (never inline JSON). */
  settingsPath: configurationFilePath.optional(),
  /** An MCP configuration file (never inline JSON). */
  mcpConfigPath: configurationFilePath.optional(),
  allowedTools: z.array(toolRule).max(200).optional(),
  disallowedTools: z.array(toolRule).max(200).optional(),
  /** Text added to the system prompt; any text (a leading "-" too), up to 100,000 UTF-8 bytes. */
  appendSystemPrompt: appendSystemPrompt.optional(),
  additionalDirectories: z.array(argumentValue).max(50).optional(),
  /**
   * Keep a copy of each file the agent's edit tools change, per turn, so rewind_session can put
   * files back (default on; off: rewind_session with files is refused).
   */
  fileCheckpointing: z.boolean().optional(),
  /** Extra environment for the agent process (at most 100 variables, 100,000 bytes). Values are kept out of the event log. */
  environment: environment.optional(),
  /**
   * The session's budget in USD (its runs' cost together, as usage reports it): a run that passes
   * it ends failed with budget_exceeded, and a turn submitted once it is spent is refused with it.
   */
  maxCostUsd: z.number().positive().max(1_000_000).optional(),
  /** The most model round trips (agentic turns) one run may take; a run that needs more ends failed with budget_exceeded. */
  maxTurns: z.number().int().positive().max(10_000).optional(),
});
export type SessionConfiguration = z.infer<typeof SessionConfiguration>;

export const sessionConfigurationKeys = Object.keys(SessionConfiguration.shape) as (keyof SessionConfiguration)[];

/** What one configuration value adds to the launch: an argument per string, NAME=value per variable. */
function launchBytes(value: unknown): number {
  if (typeof value === 'string') return utf8Bytes(value) + 1;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + launchBytes(item), 0);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).reduce((sum, [name, item]) => sum + utf8Bytes(name) + launchBytes(item) + 1, 0);
  return 0;
}

/**
 * The issue for a configuration whose values, each within its own bound, together pass
 * configurationLimits.totalBytes (e.g. two long tool lists): for the command schema's own check.
 */
export function configurationSizeIssue(configuration: Partial<Record<keyof SessionConfiguration, unknown>>) {
  const bytes = sessionConfigurationKeys.reduce((sum, key) => sum + launchBytes(configuration[key]), 0);
  if (bytes <= configurationLimits.totalBytes) return undefined;
  return {
    code: 'custom' as const,
    input: undefined,
    ...refusal(
      'configuration_too_large',
      `the configuration's values take ${bytes.toLocaleString('en')} bytes together; at most ${configurationLimits.totalBytes.toLocaleString('en')} fit a launch`,
    ),
  };
}

/** The configuration as it may be written into the event log: environment values removed. */
export function describeConfiguration(configuration: SessionConfiguration): Record<string, unknown> {
  const { environment, appendSystemPrompt, ...rest } = configuration;
  return {
    ...rest,
    ...(environment ? { environmentKeys: Object.keys(environment).sort() } : {}),
    ...(appendSystemPrompt !== undefined ? { appendSystemPromptLength: appendSystemPrompt.length } : {}),
  };
}
