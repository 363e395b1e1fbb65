import {
  type ApprovalRequest,
  type InteractionRequest,
  type PermissionMode,
  type Question,
  type QuestionSetRequest,
  interactionBounds,
} from '@tether/protocol';
import { z } from 'zod';
import { toNeutralPermissionMode } from '../launch/permission-modes.js';
import { boundedInput, sanitizeText } from './sanitize-text.js';
import { toolCategory } from './tool-category.js';

/** A can_use_tool request as the CLI sends it (loose: only what Tether reads). */
export const ToolPermissionRequest = z.looseObject({
  subtype: z.literal('can_use_tool'),
  tool_name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().min(1),
  title: z.string().nullish(),
  display_name: z.string().nullish(),
  description: z.string().nullish(),
  decision_reason: z.string().nullish(),
  blocked_path: z.string().nullish(),
  permission_suggestions: z.array(z.looseObject({ type: z.string() })).nullish(),
  suppress_always_allow_rule: z.boolean().nullish(),
  default_to_no: z.boolean().nullish(),
});
export type ToolPermissionRequest = z.infer<typeof ToolPermissionRequest>;

export interface InteractionOptions {
  /** 'none' keeps tool input out of the durable log entirely. */
  readonly toolInputDetail: 'full' | 'none';
}

/** Why a question set is refused whole (a bounded token, recorded as a diagnostic). */
export type QuestionRefusal =
  | 'malformed_questions'
  | 'question_count'
  | 'option_count'
  | 'duplicate_question'
  | 'duplicate_label'
  | 'text_too_long'
  | 'prefilled_answers';

export type BuiltInteraction = { readonly request: InteractionRequest } | { readonly refusal: QuestionRefusal };

const RawQuestions = z.array(
  z.looseObject({
    question: z.string(),
    header: z.string().optional(),
    options: z.array(z.looseObject({ label: z.string(), description: z.string().optional() })),
    multiSelect: z.boolean().optional(),
  }),
);

function buildQuestionSet(request: ToolPermissionRequest): BuiltInteraction {
  const input = request.input;
  if (input.answers !== undefined || input.annotations !== undefined) return { refusal: 'prefilled_answers' };
  const parsed = RawQuestions.safeParse(input.questions);
  if (!parsed.success) return { refusal: 'malformed_questions' };
  const raw = parsed.data;
  if (raw.length < interactionBounds.questions.min || raw.length > interactionBounds.questions.max)
    return { refusal: 'question_count' };
  const questions: Question[] = [];
  for (const item of raw) {
    if (item.options.length < interactionBounds.options.min || item.options.length > interactionBounds.options.max)
      return { refusal: 'option_count' };
    const labels = item.options.map((option) => option.label);
    if (new Set(labels).size !== labels.length) return { refusal: 'duplicate_label' };
    const tooLong =
      item.question.length === 0 ||
      item.question.length > interactionBounds.questionLength ||
      (item.header ?? '').length > interactionBounds.headerLength ||
      item.options.some(
        (option) =>
          option.label.length === 0 ||
          option.label.length > interactionBounds.labelLength ||
          (option.description ?? '').length > interactionBounds.descriptionLength,
      );
    if (tooLong) return { refusal: 'text_too_long' };
    questions.push({
      header: sanitizeText(item.header, interactionBounds.headerLength) ?? '',
      question: sanitizeText(item.question, interactionBounds.questionLength) ?? item.question,
      options: item.options.map((option) => ({
        label: option.label,
        description: sanitizeText(option.description, interactionBounds.descriptionLength) ?? '',
      })),
      multiSelect: item.multiSelect ?? false,
    });
  }
  // Answers are keyed by the full question text, so two equal questions could not be told apart.
  if (new Set(raw.map((item) => item.question)).size !== raw.length) return { refusal: 'duplicate_question' };
  const request_: QuestionSetRequest = {
    kind: 'question_set',
    toolUseId: request.tool_use_id,
    questions,
    sensitive: false,
  };
  return { request: request_ };
}

/** A rule as Claude Code writes it in its settings: `Tool` or `Tool(content)`. */
function ruleText(rule: unknown): string | null {
  if (typeof rule !== 'object' || rule === null) return null;
  const { toolName, ruleContent } = rule as { toolName?: unknown; ruleContent?: unknown };
  if (typeof toolName !== 'string') return null;
  const text = typeof ruleContent === 'string' ? `${toolName}(${ruleContent})` : toolName;
  return sanitizeText(text, 1_000) ?? null;
}

/** What approving for the session grants: the CLI's suggested permission updates, as the host shows them. */
function sessionGrantOf(
  suggestions: readonly { type: string; [key: string]: unknown }[],
): NonNullable<ApprovalRequest['sessionGrant']> {
  const rules: string[] = [];
  const directories: string[] = [];
  let mode: PermissionMode | undefined;
  for (const suggestion of suggestions) {
    if (suggestion.type === 'addRules' && Array.isArray(suggestion.rules))
      for (const rule of suggestion.rules) {
        const text = ruleText(rule);
        if (text !== null) rules.push(text);
      }
    if (suggestion.type === 'addDirectories' && Array.isArray(suggestion.directories))
      for (const directory of suggestion.directories)
        if (typeof directory === 'string') directories.push(directory.slice(0, 4_096));
    if (suggestion.type === 'setMode' && typeof suggestion.mode === 'string')
      mode = toNeutralPermissionMode(suggestion.mode) ?? mode;
  }
  return { rules: rules.slice(0, 50), ...(mode !== undefined ? { mode } : {}), directories: directories.slice(0, 50) };
}

function buildApproval(request: ToolPermissionRequest, options: InteractionOptions): BuiltInteraction {
  const suggestions = request.permission_suggestions ?? [];
  const title = sanitizeText(request.title ?? request.display_name, interactionBounds.displayTextLength);
  const description = sanitizeText(request.description, interactionBounds.displayTextLength);
  const decisionReason = sanitizeText(request.decision_reason, interactionBounds.displayTextLength);
  const blockedPath = sanitizeText(request.blocked_path, 4096);
  const plan = request.tool_name === 'ExitPlanMode' ? (sanitizeText(request.input.plan, 100_000) ?? '') : undefined;
  const approval: ApprovalRequest = {
    kind: 'approval',
    toolName: request.tool_name.slice(0, 300),
    toolUseId: request.tool_use_id,
    category: toolCategory(request.tool_name),
    ...(title !== undefined ? { title } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(decisionReason !== undefined ? { decisionReason } : {}),
    ...(blockedPath !== undefined ? { blockedPath } : {}),
    input: options.toolInputDetail === 'none' ? null : boundedInput(request.input),
    offerSessionApproval: suggestions.length > 0 && request.suppress_always_allow_rule !== true,
    // Its rules quote the tool input (`Bash(echo secret *)`): kept out with it.
    ...(suggestions.length > 0 && options.toolInputDetail !== 'none'
      ? { sessionGrant: sessionGrantOf(suggestions) }
      : {}),
    defaultToNo: request.default_to_no === true,
    ...(plan !== undefined ? { plan } : {}),
  };
  return { request: approval };
}

/** The neutral interaction for a CLI tool prompt, or why a question set must be refused whole. */
export function buildInteraction(request: ToolPermissionRequest, options: InteractionOptions): BuiltInteraction {
  return request.tool_name === 'AskUserQuestion' ? buildQuestionSet(request) : buildApproval(request, options);
}
