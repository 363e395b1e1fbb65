import { z } from 'zod';
import { PermissionMode } from './permission-mode.js';
import { randomHex32 } from './random-hex.js';

/** An unguessable reference to one interaction, valid only within its own session. */
export const InteractionRef = z
  .string()
  .regex(/^int_[0-9a-f]{32}$/, 'an interaction reference looks like int_ followed by 32 hex digits');
export type InteractionRef = z.infer<typeof InteractionRef>;

export function newInteractionRef(): InteractionRef {
  return `int_${randomHex32()}`;
}

/** Neutral bounds: a provider refuses requests past them instead of raising an interaction. */
export const interactionBounds = {
  questions: { min: 1, max: 4 },
  options: { min: 2, max: 4 },
  headerLength: 100,
  questionLength: 2_000,
  labelLength: 200,
  descriptionLength: 2_000,
  freeTextLength: 10_000,
  denyMessageLength: 2_000,
  displayTextLength: 4_000,
} as const;

export const ToolCategory = z.enum(['command', 'file_read', 'file_write', 'network', 'mcp', 'other']);
export type ToolCategory = z.infer<typeof ToolCategory>;

const displayText = z.string().max(interactionBounds.displayTextLength);

export const ApprovalRequest = z.strictObject({
  kind: z.literal('approval'),
  toolName: z.string().min(1).max(300),
  toolUseId: z.string().min(1).max(300),
  category: ToolCategory,
  /** The provider's own wording, sanitised (no terminal escapes) and bounded. Untrusted. */
  title: displayText.optional(),
  description: displayText.optional(),
  decisionReason: displayText.optional(),
  /** The path that triggered the prompt, when the provider names one. */
  blockedPath: z.string().max(4096).optional(),
  /** The tool input for display (model-authored, untrusted); null when the host asked for none. */
  input: z.record(z.string(), z.unknown()).nullable(),
  /** Whether "approve for this session" may be offered. */
  offerSessionApproval: z.boolean(),
  /**
   * What "approve for this session" grants, as the agent proposes it (untrusted, shown as text):
   * permission rules such as `Bash(npm test:*)`, a permission mode for the rest of the session (a
   * file edit's is auto_edit: every later edit accepted), folders to work in. Only rules can also be
   * saved to the project (scope local_settings). Absent when the provider does not say.
   */
  sessionGrant: z
    .strictObject({
      rules: z.array(z.string().max(1_000)).max(50),
      mode: PermissionMode.optional(),
      directories: z.array(z.string().max(4_096)).max(50),
    })
    .optional(),
  /** Approve must not be pre-selected or reachable by a stray keystroke. */
  defaultToNo: z.boolean(),
  /** For a plan-mode exit: the plan to approve (model-authored, untrusted). */
  plan: z.string().max(100_000).optional(),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

export const QuestionOption = z.strictObject({
  label: z.string().min(1).max(interactionBounds.labelLength),
  description: z.string().max(interactionBounds.descriptionLength),
});

export const Question = z.strictObject({
  header: z.string().max(interactionBounds.headerLength),
  question: z.string().min(1).max(interactionBounds.questionLength),
  options: z.array(QuestionOption).min(interactionBounds.options.min).max(interactionBounds.options.max),
  multiSelect: z.boolean(),
});
export type Question = z.infer<typeof Question>;

export const QuestionSetRequest = z.strictObject({
  kind: z.literal('question_set'),
  toolUseId: z.string().min(1).max(300),
  /** Model-authored questions (untrusted text). Free text is always allowed as an answer. */
  questions: z.array(Question).min(interactionBounds.questions.min).max(interactionBounds.questions.max),
  /** Host policy marked the set sensitive: stored and broadcast answers are redacted. */
  sensitive: z.boolean(),
});
export type QuestionSetRequest = z.infer<typeof QuestionSetRequest>;

export const InteractionRequest = z.discriminatedUnion('kind', [ApprovalRequest, QuestionSetRequest]);
export type InteractionRequest = z.infer<typeof InteractionRequest>;
export type InteractionKind = InteractionRequest['kind'];

export const ApproveAnswer = z.strictObject({
  decision: z.literal('approve'),
  /** once (default); session: the provider's matching rule for this session only; local_settings: also written to the project's local settings. */
  scope: z.enum(['once', 'session', 'local_settings']).optional(),
  /** Run this input instead of the model's. */
  updatedInput: z.record(z.string(), z.unknown()).optional(),
  /** For a plan-mode exit: the permission mode to continue in. */
  continueInMode: PermissionMode.optional(),
});

export const DenyAnswer = z.strictObject({
  decision: z.literal('deny'),
  /** What the model is told (default: a neutral refusal). */
  message: z.string().min(1).max(interactionBounds.denyMessageLength).optional(),
  /** Also stop the run. */
  interrupt: z.boolean().optional(),
});

export const QuestionAnswerItem = z.union([
  z.strictObject({
    selected: z.array(z.string().min(1).max(interactionBounds.labelLength)).min(1).max(interactionBounds.options.max),
  }),
  z.strictObject({ text: z.string().min(1).max(interactionBounds.freeTextLength) }),
  z.strictObject({ skipped: z.literal(true) }),
]);
export type QuestionAnswerItem = z.infer<typeof QuestionAnswerItem>;

export const AnswerQuestionsAnswer = z.strictObject({
  decision: z.literal('answer'),
  /** One entry per question, in order: chosen option labels, free text, or explicitly skipped. */
  answers: z.array(QuestionAnswerItem).min(interactionBounds.questions.min).max(interactionBounds.questions.max),
});

export const DeclineAnswer = z.strictObject({
  decision: z.literal('decline'),
  message: z.string().min(1).max(interactionBounds.denyMessageLength).optional(),
});

export const InteractionAnswer = z.discriminatedUnion('decision', [
  ApproveAnswer,
  DenyAnswer,
  AnswerQuestionsAnswer,
  DeclineAnswer,
]);
export type InteractionAnswer = z.infer<typeof InteractionAnswer>;

/** pending → resolving → a terminal outcome; pending/resolving → withdrawn | cancelled. */
export const InteractionStatus = z.enum([
  'pending',
  'resolving',
  'approved',
  'denied',
  'answered',
  'declined',
  'send_failed',
  'withdrawn',
  'cancelled',
]);
export type InteractionStatus = z.infer<typeof InteractionStatus>;

export const InteractionOutcome = z.enum(['approved', 'denied', 'answered', 'declined']);
export type InteractionOutcome = z.infer<typeof InteractionOutcome>;

export const CancelReason = z.enum(['run_ended', 'session_closed', 'runtime_restarted', 'runtime_stopped']);
export type CancelReason = z.infer<typeof CancelReason>;

export function isOpenInteraction(status: InteractionStatus): boolean {
  return status === 'pending' || status === 'resolving';
}
