import type { InteractionAnswer } from '@tether/protocol';
import { cliPermissionModes } from '../launch/permission-modes.js';
import type { ToolPermissionRequest } from './build-interaction.js';

export const defaultDenyMessage = 'The user denied this tool call.';
export const defaultDeclineMessage =
  'The user declined to answer these questions. Continue without the answers, or ask in your reply.';

type Suggestion = NonNullable<ToolPermissionRequest['permission_suggestions']>[number];

/**
 * The CLI's own suggestions, aimed at this session only (or at the project's local settings when
 * the host asked). Rules that match the call are preferred; a mode switch is offered only when
 * the CLI suggests nothing narrower (as it does for file edits).
 */
function sessionPermissions(suggestions: readonly Suggestion[], scope: 'session' | 'local_settings'): Suggestion[] {
  const rules = suggestions.filter(
    (suggestion) => suggestion.type === 'addRules' || suggestion.type === 'addDirectories',
  );
  const chosen = rules.some((suggestion) => suggestion.type === 'addRules') ? rules : suggestions;
  return chosen.map((suggestion) => ({
    ...suggestion,
    destination: scope === 'local_settings' && suggestion.type === 'addRules' ? 'localSettings' : 'session',
  }));
}

/** The question texts exactly as the model wrote them: the CLI matches answers by them (not by header). */
function rawQuestionTexts(request: ToolPermissionRequest): string[] {
  const questions = request.input.questions;
  return Array.isArray(questions)
    ? questions.map((question) => String((question as { question?: unknown }).question ?? ''))
    : [];
}

function questionAnswers(request: ToolPermissionRequest, answer: Extract<InteractionAnswer, { decision: 'answer' }>) {
  const texts = rawQuestionTexts(request);
  const answers: Record<string, string> = {};
  const annotations: Record<string, { unanswered: 'skipped' }> = {};
  answer.answers.forEach((item, index) => {
    const question = texts[index] ?? '';
    if ('selected' in item) answers[question] = item.selected.join(', ');
    else if ('text' in item) answers[question] = item.text;
    else annotations[question] = { unanswered: 'skipped' };
  });
  return { answers, annotations };
}

/** The control_response payload for the CLI's can_use_tool request, from a host's answer. */
export function buildPermissionResponse(
  request: ToolPermissionRequest,
  answer: InteractionAnswer,
): Record<string, unknown> {
  switch (answer.decision) {
    case 'approve': {
      const permissions =
        answer.continueInMode !== undefined
          ? [{ type: 'setMode', mode: cliPermissionModes[answer.continueInMode], destination: 'session' }]
          : answer.scope === 'session' || answer.scope === 'local_settings'
            ? sessionPermissions(request.permission_suggestions ?? [], answer.scope)
            : [];
      return {
        behavior: 'allow',
        ...(answer.updatedInput !== undefined ? { updatedInput: answer.updatedInput } : {}),
        ...(permissions.length > 0 ? { updatedPermissions: permissions } : {}),
        toolUseID: request.tool_use_id,
      };
    }
    case 'deny':
      return {
        behavior: 'deny',
        message: answer.message ?? defaultDenyMessage,
        ...(answer.interrupt ? { interrupt: true } : {}),
        toolUseID: request.tool_use_id,
      };
    case 'answer': {
      const { answers, annotations } = questionAnswers(request, answer);
      return {
        behavior: 'allow',
        updatedInput: { ...request.input, answers, ...(Object.keys(annotations).length > 0 ? { annotations } : {}) },
        toolUseID: request.tool_use_id,
      };
    }
    case 'decline':
      return { behavior: 'deny', message: answer.message ?? defaultDeclineMessage, toolUseID: request.tool_use_id };
  }
}
