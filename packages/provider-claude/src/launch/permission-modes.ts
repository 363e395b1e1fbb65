import type { PermissionMode } from '@tether/protocol';

/** Neutral permission mode → the claude CLI's own name. */
export const cliPermissionModes = {
  plan: 'plan',
  ask_before_edit: 'default',
  auto_edit: 'acceptEdits',
  auto: 'auto',
  dont_ask: 'dontAsk',
  bypass: 'bypassPermissions',
} as const satisfies Record<PermissionMode, string>;

export type CliPermissionMode = (typeof cliPermissionModes)[PermissionMode];

/** The reverse map, derived so the two can never disagree. */
export const neutralPermissionModes = Object.fromEntries(
  Object.entries(cliPermissionModes).map(([neutral, cli]) => [cli, neutral]),
) as Record<CliPermissionMode, PermissionMode>;

export function toNeutralPermissionMode(cliMode: string): PermissionMode | undefined {
  if (cliMode === 'manual') return 'ask_before_edit';
  return (neutralPermissionModes as Record<string, PermissionMode>)[cliMode];
}
