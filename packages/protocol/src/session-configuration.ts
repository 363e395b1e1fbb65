import { z } from 'zod';
import { PermissionMode } from './permission-mode.js';

/** A value that can never be mistaken for a command-line flag. */
const argumentValue = z
  .string()
  .min(1)
  .max(4096)
  .refine((value) => !value.startsWith('-'), 'must not start with "-"')
  .refine((value) => !value.includes('\0'), 'must not contain NUL');

const toolRule = argumentValue.refine((value) => !/[\r\n]/.test(value), 'must be a single line');

export const EnvironmentVariableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name');

export const Effort = z.enum(['low', 'medium', 'high', 'xhigh', 'max']);
export type Effort = z.infer<typeof Effort>;

/**
 * Typed session configuration. Never raw CLI arguments: a provider maps each field to its own
 * flags, and nothing here can override a flag the provider controls.
 */
export const SessionConfiguration = z.strictObject({
  /** A model name or alias; omitted or "default" means the provider's own default. */
  model: argumentValue.max(200).optional(),
  effort: Effort.optional(),
  /** A named agent definition the provider knows. */
  agent: argumentValue.max(200).optional(),
  /** Omitted means the user's configured default. */
  permissionMode: PermissionMode.optional(),
  settingsPath: argumentValue.optional(),
  mcpConfigPath: argumentValue.optional(),
  allowedTools: z.array(toolRule).max(200).optional(),
  disallowedTools: z.array(toolRule).max(200).optional(),
  appendSystemPrompt: z.string().min(1).max(100_000).optional(),
  additionalDirectories: z.array(argumentValue).max(50).optional(),
  /** Extra environment for the agent process. Values are kept out of the event log. */
  environment: z.record(EnvironmentVariableName, z.string().max(100_000)).optional(),
});
export type SessionConfiguration = z.infer<typeof SessionConfiguration>;

export const sessionConfigurationKeys = Object.keys(SessionConfiguration.shape) as (keyof SessionConfiguration)[];

/** The configuration as it may be written into the event log: environment values removed. */
export function describeConfiguration(configuration: SessionConfiguration): Record<string, unknown> {
  const { environment, appendSystemPrompt, ...rest } = configuration;
  return {
    ...rest,
    ...(environment ? { environmentKeys: Object.keys(environment).sort() } : {}),
    ...(appendSystemPrompt !== undefined ? { appendSystemPromptLength: appendSystemPrompt.length } : {}),
  };
}
