import type {
  CreateElicitationRequest,
  CreateElicitationResponse,
  ElicitationPropertySchema,
} from '@agentclientprotocol/sdk';
import type { InteractionAnswer, QuestionAnswerItem, QuestionSetRequest } from '@tether/protocol';

function choiceKey(index: number): string {
  return `question_${index + 1}`;
}

function otherKey(index: number): string {
  return `question_${index + 1}_other`;
}

/** A question set as an elicitation form: each question a choice (single or multiple), plus a free-text answer. */
export function questionElicitationOf(sessionId: string, request: QuestionSetRequest): CreateElicitationRequest {
  const properties: Record<string, ElicitationPropertySchema> = {};
  request.questions.forEach((question, index) => {
    const options = question.options.map((option) => ({
      const: option.label,
      title: option.label,
      description: option.description,
    }));
    const title = question.header || question.question;
    properties[choiceKey(index)] = question.multiSelect
      ? { type: 'array', title, description: question.question, items: { anyOf: options } }
      : { type: 'string', title, description: question.question, oneOf: options };
    properties[otherKey(index)] = { type: 'string', title: 'Other answer', description: 'Your own answer instead' };
  });
  return {
    mode: 'form',
    sessionId,
    toolCallId: request.toolUseId,
    message: request.questions.length === 1 ? request.questions[0]!.question : 'The agent has some questions.',
    requestedSchema: { type: 'object', properties },
  };
}

function itemOf(values: Record<string, unknown>, index: number, labels: readonly string[]): QuestionAnswerItem {
  const other = values[otherKey(index)];
  if (typeof other === 'string' && other.trim() !== '') return { text: other.trim() };
  const choice = values[choiceKey(index)];
  const picked = (Array.isArray(choice) ? choice : [choice]).filter(
    (value): value is string => typeof value === 'string' && labels.includes(value),
  );
  return picked.length > 0 ? { selected: picked } : { skipped: true };
}

/** The form's answers as Tether's; declined or cancelled tells the model the user chose not to answer. */
export function questionAnswerOf(request: QuestionSetRequest, response: CreateElicitationResponse): InteractionAnswer {
  if (response.action !== 'accept' || !('content' in response) || !response.content) {
    return { decision: 'decline', message: 'The user chose not to answer these questions.' };
  }
  const values = response.content as Record<string, unknown>;
  return {
    decision: 'answer',
    answers: request.questions.map((question, index) =>
      itemOf(
        values,
        index,
        question.options.map((option) => option.label),
      ),
    ),
  };
}

/** For a client that cannot show questions: the model is told to ask in its reply. */
export const questionsUnsupportedAnswer: InteractionAnswer = {
  decision: 'decline',
  message: "The user's editor cannot show these questions. Ask them in your reply instead, and wait for the answer.",
};
