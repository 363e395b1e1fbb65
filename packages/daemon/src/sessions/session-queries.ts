import { invalidRequest } from '../errors/error-response.js';

/** GET /v1/sessions/:id/diff answers at most this much unified diff unless ?maxBytes asks otherwise. */
export const defaultDiffBytes = 1024 * 1024;
/** The most a diff answer may hold: the file list is always whole, the text is cut here. */
export const maxDiffBytes = 16 * 1024 * 1024;

/** Reads ?maxBytes of the diff route: a whole number from 1 to maxDiffBytes; anything else is invalid_command. */
export function parseDiffMaxBytes(value: string | undefined): number {
  if (value === undefined) return defaultDiffBytes;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1 || Number(value) > maxDiffBytes)
    throw invalidRequest(
      `"maxBytes" must be a whole number from 1 to ${maxDiffBytes} (the diff is cut there; default ${defaultDiffBytes}).`,
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
