export { createGitWorktreeAcquirer } from './git-worktree-acquirer.js';
export type { GitWorktreeAcquirerOptions } from './git-worktree-acquirer.js';

export const VERSION = '0.1.0';
