// TODO(issue 14): createGitWorktreeAcquirer.
export const VERSION = '0.1.0';
