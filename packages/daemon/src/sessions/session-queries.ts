import { diffLimits } from '@tether/protocol';
import { invalidRequest } from '../errors/error-response.js';

/** Reads ?maxBytes of the diff route: a whole number from 1 to the protocol's cap; anything else is invalid_command. */
export function parseDiffMaxBytes(value: string | undefined): number {
  if (value === undefined) return diffLimits.defaultBytes;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > diffLimits.maxBytes)
    throw invalidRequest(
      `"maxBytes" must be a whole number from 1 to ${diffLimits.maxBytes} (${diffLimits.maxBytes / (1024 * 1024)} MiB; the diff is cut there; default ${diffLimits.defaultBytes}).`,
      'invalid_max_bytes',
    );
  return Number(value);
}

/** Reads ?discardWorkspaceChanges of DELETE /v1/sessions/:id: "true" or "false" (default false). */
export function parseDiscardWorkspaceChanges(value: string | undefined): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw invalidRequest(
    '"discardWorkspaceChanges" is "true" (remove the session\'s worktree and branch even though they hold work) or "false".',
    'invalid_discard_workspace_changes',
  );
}
