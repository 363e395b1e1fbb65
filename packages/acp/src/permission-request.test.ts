import type { ApprovalRequest } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { approvalAnswerOf, permissionRequestOf } from './permission-request.js';

const sessionId = `ses_${'a'.repeat(32)}`;

/** The Bash approval the conformance suite records for `echo approved > approved.txt`. */
const bash: ApprovalRequest = {
  kind: 'approval',
  toolName: 'Bash',
  toolUseId: 'toolu_1',
  category: 'command',
  title: 'Bash',
  description: 'Write a file',
  blockedPath: '/work/space/approved.txt',
  input: { command: 'echo approved > approved.txt', description: 'Write a file' },
  offerSessionApproval: true,
  defaultToNo: false,
};

describe('approvals as session/request_permission', () => {
  it('offers allow once, allow for the session (when the agent can) and reject, with the tool call', () => {
    expect(permissionRequestOf(sessionId, bash)).toEqual({
      sessionId,
      toolCall: {
        toolCallId: 'toolu_1',
        title: 'echo approved > approved.txt',
        kind: 'execute',
        status: 'pending',
        locations: [{ path: '/work/space/approved.txt' }],
        content: [{ type: 'content', content: { type: 'text', text: 'Write a file' } }],
        rawInput: bash.input,
      },
      options: [
        { optionId: 'allow_once', kind: 'allow_once', name: 'Allow' },
        { optionId: 'allow_always', kind: 'allow_always', name: 'Allow for this session' },
        { optionId: 'reject_once', kind: 'reject_once', name: 'Reject' },
      ],
    });
    const cautious = permissionRequestOf(sessionId, { ...bash, offerSessionApproval: false, defaultToNo: true });
    expect(cautious.options.map((option) => option.optionId)).toEqual(['reject_once', 'allow_once']);
  });

  it("maps the client's pick to Tether's answer; cancelled or an option never offered denies", () => {
    expect(approvalAnswerOf(bash, { outcome: 'selected', optionId: 'allow_once' })).toEqual({
      decision: 'approve',
      scope: 'once',
    });
    expect(approvalAnswerOf(bash, { outcome: 'selected', optionId: 'allow_always' })).toEqual({
      decision: 'approve',
      scope: 'session',
    });
    expect(approvalAnswerOf(bash, { outcome: 'selected', optionId: 'reject_once' })).toEqual({ decision: 'deny' });
    expect(approvalAnswerOf(bash, { outcome: 'cancelled' })).toMatchObject({ decision: 'deny' });
    expect(
      approvalAnswerOf({ ...bash, offerSessionApproval: false }, { outcome: 'selected', optionId: 'allow_always' }),
    ).toMatchObject({
      decision: 'deny',
    });
  });

  it('leaving plan mode shows the plan and chooses the mode to continue in', () => {
    const exit: ApprovalRequest = {
      ...bash,
      toolName: 'ExitPlanMode',
      title: 'ExitPlanMode',
      blockedPath: undefined,
      input: { plan: '1. Fix it' },
      plan: '1. Fix it',
      offerSessionApproval: false,
    };
    const request = permissionRequestOf(sessionId, exit);
    expect(request.toolCall).toMatchObject({
      kind: 'switch_mode',
      content: [{ type: 'content', content: { text: '1. Fix it' } }],
    });
    expect(request.options.map((option) => option.kind)).toEqual(['allow_always', 'allow_once', 'reject_once']);
    expect(approvalAnswerOf(exit, { outcome: 'selected', optionId: 'plan_accept_edits' })).toEqual({
      decision: 'approve',
      continueInMode: 'auto_edit',
    });
    expect(approvalAnswerOf(exit, { outcome: 'selected', optionId: 'plan_keep_planning' })).toEqual({
      decision: 'deny',
    });
  });
});
