import type { ApprovalRequest } from './interactions.js';

/** What approving for the session grants, in words, for any host to show: its rules, the mode it switches to, its folders. */
export function describeSessionGrant(grant: NonNullable<ApprovalRequest['sessionGrant']>): string {
  const parts: string[] = [];
  if (grant.rules.length > 0) parts.push(`allows ${grant.rules.join(', ')}`);
  if (grant.mode !== undefined)
    parts.push(
      `switches the session to ${grant.mode}${grant.mode === 'auto_edit' ? ': every later edit accepted without asking' : ''}`,
    );
  if (grant.directories.length > 0) parts.push(`adds ${grant.directories.join(', ')}`);
  return parts.join('; ') || 'as the agent proposes';
}

/**
 * Whether the approval may be saved in the project (scope local_settings): only a grant of rules can
 * be written to its settings; a mode (a file edit's auto_edit) is the session's alone. checkAnswer
 * refuses the others.
 */
export function projectApprovalOffered(request: ApprovalRequest): boolean {
  return (
    request.offerSessionApproval &&
    request.plan === undefined &&
    (request.sessionGrant === undefined || request.sessionGrant.rules.length > 0)
  );
}
