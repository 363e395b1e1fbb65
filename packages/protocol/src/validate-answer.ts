import { AgentError } from './errors/agent-error.js';
import type { InteractionAnswer, InteractionRequest } from './interactions.js';

function unsupported(message: string, reason: string): AgentError {
  return new AgentError({ code: 'capability_unsupported', message, details: { reason } });
}

function invalid(message: string, reason: string): AgentError {
  return new AgentError({ code: 'invalid_command', message, details: { reason } });
}

/**
 * Checks an answer against the interaction it answers, before anything reaches the agent.
 * Returns the refusal (the interaction stays pending), or null when the answer fits.
 */
export function checkAnswer(request: InteractionRequest, answer: InteractionAnswer): AgentError | null {
  if (request.kind === 'approval') {
    if (answer.decision !== 'approve' && answer.decision !== 'deny') {
      return unsupported(`An approval is answered with "approve" or "deny", not "${answer.decision}".`, 'answer_kind');
    }
    if (answer.decision === 'approve') {
      if ((answer.scope === 'session' || answer.scope === 'local_settings') && !request.offerSessionApproval) {
        return unsupported(
          'This prompt cannot be approved for the whole session (the agent offers no rule for it). Approve once or deny.',
          'session_approval_not_offered',
        );
      }
      // Only rules can be written to the project's settings; a mode (a file edit's auto_edit) is the session's alone.
      if (
        answer.scope === 'local_settings' &&
        request.sessionGrant !== undefined &&
        request.sessionGrant.rules.length === 0
      ) {
        return unsupported(
          `This approval grants no rule to save in the project${request.sessionGrant.mode ? ` (for the session it switches the mode to ${request.sessionGrant.mode})` : ''}. Approve once or for the session.`,
          'project_approval_not_offered',
        );
      }
      if (answer.updatedInput !== undefined && changesNothing(answer.updatedInput)) {
        return invalid(
          "An empty updatedInput changes nothing: the tool would run with the model's own input. Give the whole input the tool is to run with, or approve without updatedInput.",
          'updated_input_empty',
        );
      }
      if (answer.continueInMode !== undefined && request.plan === undefined) {
        return unsupported('continueInMode applies only to approving a plan.', 'mode_not_applicable');
      }
    }
    return null;
  }
  if (answer.decision !== 'answer' && answer.decision !== 'decline') {
    return unsupported(
      `A question set is answered with "answer" or "decline", not "${answer.decision}".`,
      'answer_kind',
    );
  }
  if (answer.decision === 'decline') return null;
  if (answer.answers.length !== request.questions.length) {
    return invalid(
      `The question set has ${request.questions.length} question(s) but the answer has ${answer.answers.length}. Answer each question in order, or mark it {"skipped": true}.`,
      'answer_count',
    );
  }
  for (const [index, item] of answer.answers.entries()) {
    const question = request.questions[index]!;
    if (!('selected' in item)) continue;
    const labels = new Set(question.options.map((option) => option.label));
    const unknown = item.selected.filter((label) => !labels.has(label));
    if (unknown.length > 0) {
      return invalid(
        `Answer ${index + 1} selects a label that is not among the question's options. Use the option labels exactly, or answer with {"text": "..."}.`,
        'unknown_label',
      );
    }
    if (new Set(item.selected).size !== item.selected.length) {
      return invalid(`Answer ${index + 1} selects the same option twice.`, 'duplicate_label');
    }
    if (!question.multiSelect && item.selected.length !== 1) {
      return invalid(`Question ${index + 1} takes exactly one option.`, 'single_select');
    }
  }
  return null;
}

/** The CLI takes an empty tool input as no change: the model's own input would run, recorded as an edit. */
export function changesNothing(updatedInput: Readonly<Record<string, unknown>>): boolean {
  return Object.keys(updatedInput).length === 0;
}
