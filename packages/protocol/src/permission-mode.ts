import { z } from 'zod';

/**
 * Neutral permission modes. Providers map them to their own names
 * (Claude Code: plan, default, acceptEdits, auto, dontAsk, bypassPermissions).
 */
export const PermissionMode = z.enum(['plan', 'ask_before_edit', 'auto_edit', 'auto', 'dont_ask', 'bypass']);
export type PermissionMode = z.infer<typeof PermissionMode>;
