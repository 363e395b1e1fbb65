import { AgentError } from '@tether/protocol';
import { directoryAcquirer } from './directory-acquirer.js';
import type { WorkspaceAcquirer } from './workspace-acquirer.js';

/** The runtime's acquirers by kind: the built-in `directory`, then the host's (one for a built-in kind replaces it). */
export class WorkspaceAcquirers {
  private readonly byKind: ReadonlyMap<string, WorkspaceAcquirer>;

  constructor(added: readonly WorkspaceAcquirer[] = []) {
    this.byKind = new Map([directoryAcquirer, ...added].map((acquirer) => [acquirer.kind, acquirer]));
  }

  /** A shutdown that does not wait: every acquirer's work in flight is stopped. */
  stopAll(): void {
    for (const acquirer of this.byKind.values()) acquirer.stop?.();
  }

  /** At start-up: every acquirer's sweep of what an earlier host left half-made; each failure told, none thrown. */
  async sweepAll(onError: (error: unknown) => void): Promise<void> {
    await Promise.all([...this.byKind.values()].map((acquirer) => acquirer.sweep?.().catch(onError)));
  }

  /** The acquirer of a kind; invalid_workspace (unsupported_kind) when this runtime was given none. */
  of(kind: string): WorkspaceAcquirer {
    const acquirer = this.byKind.get(kind);
    if (acquirer) return acquirer;
    throw new AgentError({
      code: 'invalid_workspace',
      message: `This runtime cannot make a "${kind}" workspace; it knows ${[...this.byKind.keys()].join(', ')}. git_worktree workspaces need the git acquirer (createAgentRuntime({ workspaces: [createGitWorktreeAcquirer(…)] }) from @tether/workspace-git), which the tether daemon and CLI include; or open the session on a directory.`,
      details: { reason: 'unsupported_kind' },
    });
  }
}
