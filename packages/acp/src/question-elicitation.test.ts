import type { QuestionSetRequest } from '@tether/protocol';
import { sampleQuestions } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { questionAnswerOf, questionElicitationOf } from './question-elicitation.js';

const sessionId = `ses_${'a'.repeat(32)}`;

const { color, sizes } = sampleQuestions;
const questions: QuestionSetRequest = {
  kind: 'question_set',
  toolUseId: 'toolu_q',
  sensitive: false,
  questions: [color, sizes],
};

describe('questions as an elicitation form', () => {
  it('each question a single or multiple choice, with a free-text answer beside it', () => {
    const request = questionElicitationOf(sessionId, questions);
    expect(request).toMatchObject({
      mode: 'form',
      sessionId,
      toolCallId: 'toolu_q',
      message: 'The agent has some questions.',
    });
    const { properties } = (request as { requestedSchema: { properties: Record<string, unknown> } }).requestedSchema;
    expect(properties.question_1).toEqual({
      type: 'string',
      title: 'Color',
      description: 'Which color should the button be?',
      oneOf: [
        { const: 'Red', title: 'Red', description: 'warm' },
        { const: 'Blue', title: 'Blue', description: 'cool' },
      ],
    });
    expect(properties.question_2).toMatchObject({
      type: 'array',
      items: { anyOf: [{ const: 'Small' }, { const: 'Medium' }, { const: 'Large' }] },
    });
    expect(properties.question_1_other).toMatchObject({ type: 'string' });
  });

  it('accepted answers become chosen labels, free text or skipped; declined and cancelled decline', () => {
    expect(
      questionAnswerOf(questions, {
        action: 'accept',
        content: { question_1: 'Blue', question_2: ['Small', 'Large'] },
      }),
    ).toEqual({
      decision: 'answer',
      answers: [{ selected: ['Blue'] }, { selected: ['Small', 'Large'] }],
    });
    expect(
      questionAnswerOf(questions, { action: 'accept', content: { question_1: 'Green?', question_1_other: ' Green ' } }),
    ).toEqual({ decision: 'answer', answers: [{ text: 'Green' }, { skipped: true }] });
    expect(questionAnswerOf(questions, { action: 'decline' })).toMatchObject({ decision: 'decline' });
    expect(questionAnswerOf(questions, { action: 'cancel' })).toMatchObject({ decision: 'decline' });
  });
});
