import type { PermissionOption, RequestPermissionOutcome, RequestPermissionRequest } from '@agentclientprotocol/sdk';
import type { ApprovalRequest, InteractionAnswer } from '@tether/protocol';
import { describeToolCall } from './tool-call-description.js';

/** Each option the client may pick, with the answer it gives Tether. */
const choices = {
  allow_once: { kind: 'allow_once', name: 'Allow', answer: { decision: 'approve', scope: 'once' } },
  allow_always: {
    kind: 'allow_always',
    name: 'Allow for this session',
    answer: { decision: 'approve', scope: 'session' },
  },
  reject_once: { kind: 'reject_once', name: 'Reject', answer: { decision: 'deny' } },
  plan_accept_edits: {
    kind: 'allow_always',
    name: 'Yes, and accept edits',
    answer: { decision: 'approve', continueInMode: 'auto_edit' },
  },
  plan_ask_before_edits: {
    kind: 'allow_once',
    name: 'Yes, and ask before edits',
    answer: { decision: 'approve', continueInMode: 'ask_before_edit' },
  },
  plan_keep_planning: { kind: 'reject_once', name: 'No, keep planning', answer: { decision: 'deny' } },
} as const satisfies Record<string, { kind: PermissionOption['kind']; name: string; answer: InteractionAnswer }>;

type OptionId = keyof typeof choices;

function optionIds(request: ApprovalRequest): OptionId[] {
  if (request.toolName === 'ExitPlanMode') return ['plan_accept_edits', 'plan_ask_before_edits', 'plan_keep_planning'];
  // "Allow always" only where the agent can remember it (a session rule); Tether has no "reject always".
  const allow: OptionId[] = request.offerSessionApproval ? ['allow_once', 'allow_always'] : ['allow_once'];
  return request.defaultToNo ? ['reject_once', ...allow] : [...allow, 'reject_once'];
}

/** An approval as session/request_permission: the tool call as the client showed it, and the options. */
export function permissionRequestOf(sessionId: string, request: ApprovalRequest): RequestPermissionRequest {
  const input = request.input ?? undefined;
  const description = describeToolCall(request.toolName, input);
  const content = request.plan
    ? [{ type: 'content' as const, content: { type: 'text' as const, text: request.plan } }]
    : description.content;
  return {
    sessionId,
    toolCall: {
      toolCallId: request.toolUseId,
      title: request.title && request.toolName !== request.title ? request.title : description.title,
      kind: description.kind,
      status: 'pending',
      locations: request.blockedPath ? [{ path: request.blockedPath }] : description.locations,
      content,
      ...(input ? { rawInput: input } : {}),
    },
    options: optionIds(request).map((optionId) => ({
      optionId,
      kind: choices[optionId].kind,
      name: choices[optionId].name,
    })),
  };
}

const cancelledAnswer: InteractionAnswer = {
  decision: 'deny',
  message: 'The user cancelled the request in their editor.',
};

/** The client's pick as Tether's answer; cancelled (or an option that was not offered) denies. */
export function approvalAnswerOf(request: ApprovalRequest, outcome: RequestPermissionOutcome): InteractionAnswer {
  if (outcome.outcome !== 'selected') return cancelledAnswer;
  const optionId = outcome.optionId as OptionId;
  if (!optionIds(request).includes(optionId)) return cancelledAnswer;
  return choices[optionId].answer;
}
