import { z } from 'zod';

export const DirectoryWorkspace = z.strictObject({
  kind: z.literal('directory'),
  path: z.string().min(1).max(4096),
});

/** Where a session works. Git worktrees come later as another kind. */
export const Workspace = z.discriminatedUnion('kind', [DirectoryWorkspace]);
export type Workspace = z.infer<typeof Workspace>;
