import { AgentError, type InteractionAnswer, newInteractionRef } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';
import {
  type ToolPermissionRequest,
  buildInteraction,
  ToolPermissionRequest as ToolPermissionRequestSchema,
} from '../interactions/build-interaction.js';
import { buildPermissionResponse } from '../interactions/build-permission-response.js';

export interface ToolPromptPolicy {
  /** bridge: the host decides each tool prompt; deny: every prompt is denied with a message. */
  readonly approvals: 'bridge' | 'deny';
  /** bridge: AskUserQuestion reaches the host; deny: the model is told to ask in its reply. */
  readonly questions: 'bridge' | 'deny';
  readonly toolInputDetail: 'full' | 'none';
}

/** Writes one answer to one of the CLI's requests: whether its input took it (a promise when known only once written). */
export type AnswerWriter = (requestId: string, response: Record<string, unknown>) => boolean | Promise<boolean>;

const approvalsDeniedMessage =
  'This tool call was not permitted: the host does not accept tool approvals in this session. Continue without it.';
const questionsDeniedMessage = 'Questions cannot be shown to the user in this session. Ask them in your reply instead.';
const runEndedMessage = 'The turn this request belonged to has ended, so it was not permitted.';

/** A CLI tool prompt raised to the host as an interaction, waiting for its answer. */
interface OpenPrompt {
  readonly requestId: string;
  readonly runId: string;
  readonly request: ToolPermissionRequest;
}

/**
 * The CLI's tool prompts (can_use_tool, including AskUserQuestion): each is answered exactly
 * once, either raised to the host as an interaction or denied at once with a message the model sees.
 */
export class ToolPrompts {
  private readonly policy: ToolPromptPolicy;
  private readonly emit: (part: AgentProviderV1Part) => void;
  private readonly note: (code: string) => void;
  private readonly open = new Map<string, OpenPrompt>();

  constructor(options: {
    policy: ToolPromptPolicy;
    emit: (part: AgentProviderV1Part) => void;
    note: (code: string) => void;
  }) {
    this.policy = options.policy;
    this.emit = options.emit;
    this.note = options.note;
  }

  get size(): number {
    return this.open.size;
  }

  /** The run an open prompt was asked in; undefined once it is answered or withdrawn. */
  runOf(interactionRef: string): string | undefined {
    return this.open.get(interactionRef)?.runId;
  }

  /** A new prompt from the CLI, during the run `runId` (null when no run of ours is active). */
  onRequest(requestId: string, raw: unknown, runId: string | null, write: AnswerWriter): void {
    const deny = (message: string, code: string) => {
      void write(requestId, { behavior: 'deny', message });
      this.note(code);
    };
    const parsed = ToolPermissionRequestSchema.safeParse(raw);
    if (!parsed.success)
      return deny('The tool request could not be read, so it was not permitted.', 'claude.prompt_malformed');
    const request = parsed.data;
    if (runId === null)
      return deny('This tool request belongs to no active turn, so it was not permitted.', 'claude.prompt_without_run');
    const isQuestion = request.tool_name === 'AskUserQuestion';
    if (isQuestion && this.policy.questions === 'deny')
      return deny(questionsDeniedMessage, 'claude.questions_denied_by_policy');
    if (!isQuestion && this.policy.approvals === 'deny')
      return deny(approvalsDeniedMessage, 'claude.approvals_denied_by_policy');
    const built = buildInteraction(request, { toolInputDetail: this.policy.toolInputDetail });
    if ('refusal' in built) {
      return deny(
        `These questions could not be shown to the user (${built.refusal.replaceAll('_', ' ')}). Ask in your reply instead.`,
        `claude.question_refused.${built.refusal}`,
      );
    }
    const interactionRef = newInteractionRef();
    this.open.set(interactionRef, { requestId, runId, request });
    this.emit({ type: 'interaction.requested', runId, interactionRef, request: built.request });
  }

  /**
   * Delivers a host's answer; throws (or, when delivery is known only once written, returns a promise
   * that rejects) when the CLI no longer waits for it or cannot take it.
   */
  respond(interactionRef: string, answer: InteractionAnswer, write: AnswerWriter): void | Promise<void> {
    const prompt = this.open.get(interactionRef);
    if (!prompt) {
      throw new AgentError({
        code: 'interaction_already_settled',
        message: 'The claude CLI is no longer waiting for this answer (it withdrew the prompt or its turn ended).',
      });
    }
    this.open.delete(interactionRef);
    const notTaken = () =>
      new AgentError({
        code: 'provider_crashed',
        message: 'The claude CLI is not taking input any more, so the answer could not be delivered.',
        details: { reason: 'stdin_closed' },
      });
    const written = write(prompt.requestId, buildPermissionResponse(prompt.request, answer));
    if (written === false) throw notTaken();
    if (written === true) return;
    return written.then((delivered) => {
      if (!delivered) throw notTaken();
    });
  }

  /** The CLI took a prompt back (control_cancel_request). */
  withdraw(requestId: string): void {
    for (const [interactionRef, prompt] of this.open) {
      if (prompt.requestId !== requestId) continue;
      this.open.delete(interactionRef);
      this.emit({ type: 'interaction.withdrawn', runId: prompt.runId, interactionRef });
    }
  }

  /**
   * A run ended: whatever of its prompts is still open is denied (the CLI ignores an answer to a
   * prompt it gave up; the SDK's canUseTool promise must settle) and forgotten.
   */
  forgetRun(runId: string, write: AnswerWriter): void {
    for (const [interactionRef, prompt] of this.open) {
      if (prompt.runId !== runId) continue;
      this.open.delete(interactionRef);
      void write(prompt.requestId, { behavior: 'deny', message: runEndedMessage });
    }
  }

  /** Denies every open prompt (nothing is allowed on the way out) and forgets them. */
  denyAll(write: AnswerWriter, message: string): void {
    for (const prompt of this.open.values()) void write(prompt.requestId, { behavior: 'deny', message });
    this.open.clear();
  }

  clear(): void {
    this.open.clear();
  }
}
