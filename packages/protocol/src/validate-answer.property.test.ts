import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AgentError, SerializedAgentError } from './errors/agent-error.js';
import {
  type InteractionAnswer,
  type InteractionRequest,
  type QuestionAnswerItem,
  InteractionAnswer as InteractionAnswerSchema,
  InteractionRequest as InteractionRequestSchema,
} from './interactions.js';
import { checkAnswer } from './validate-answer.js';

// Labels come from a small pool so that answers often pick real options, sometimes unknown ones.
const label = fc.constantFrom('Yes', 'No', 'Maybe', 'Later', 'Other');

const question = fc.record({
  header: fc.string({ maxLength: 10 }),
  question: fc.string({ minLength: 1, maxLength: 20 }),
  options: fc
    .uniqueArray(label, { minLength: 2, maxLength: 4 })
    .map((labels) => labels.map((text) => ({ label: text, description: '' }))),
  multiSelect: fc.boolean(),
});

const request: fc.Arbitrary<InteractionRequest> = fc.oneof(
  fc.record(
    {
      kind: fc.constant('approval' as const),
      toolName: fc.constantFrom('Bash', 'Edit', 'ExitPlanMode'),
      toolUseId: fc.constant('toolu_1'),
      category: fc.constantFrom('command' as const, 'file_write' as const, 'other' as const),
      input: fc.constant({}),
      offerSessionApproval: fc.boolean(),
      defaultToNo: fc.boolean(),
      plan: fc.string({ maxLength: 20 }),
    },
    { requiredKeys: ['kind', 'toolName', 'toolUseId', 'category', 'input', 'offerSessionApproval', 'defaultToNo'] },
  ),
  fc.record({
    kind: fc.constant('question_set' as const),
    toolUseId: fc.constant('toolu_2'),
    questions: fc.array(question, { minLength: 1, maxLength: 4 }),
    sensitive: fc.boolean(),
  }),
);

const answerItem = fc.oneof(
  fc.record({ selected: fc.array(label, { minLength: 1, maxLength: 4 }) }),
  fc.record({ text: fc.string({ minLength: 1, maxLength: 20 }) }),
  fc.constant({ skipped: true as const }),
);

const answer: fc.Arbitrary<InteractionAnswer> = fc.oneof(
  fc.record(
    {
      decision: fc.constant('approve' as const),
      scope: fc.constantFrom('once' as const, 'session' as const, 'local_settings' as const),
      continueInMode: fc.constantFrom('plan' as const, 'auto_edit' as const),
    },
    { requiredKeys: ['decision'] },
  ),
  fc.record(
    {
      decision: fc.constant('deny' as const),
      message: fc.string({ minLength: 1, maxLength: 20 }),
      interrupt: fc.boolean(),
    },
    { requiredKeys: ['decision'] },
  ),
  fc.record({
    decision: fc.constant('answer' as const),
    answers: fc.array(answerItem, { minLength: 1, maxLength: 4 }),
  }),
  fc.record(
    { decision: fc.constant('decline' as const), message: fc.string({ minLength: 1, maxLength: 20 }) },
    { requiredKeys: ['decision'] },
  ),
);

/** An answer that picks real options: exactly one for a single-select question. */
function fittingAnswer(
  questions: readonly { options: readonly { label: string }[]; multiSelect: boolean }[],
  picks: readonly number[],
): { decision: 'answer'; answers: QuestionAnswerItem[] } {
  return {
    decision: 'answer',
    answers: questions.map((item, index) => {
      const count = item.multiSelect ? 1 + ((picks[index] ?? 0) % item.options.length) : 1;
      return { selected: item.options.slice(0, count).map((option) => option.label) };
    }),
  };
}

describe('checkAnswer (property-based)', () => {
  it('accepts or refuses any schema-valid answer with a typed reason, never throws and never changes the request or the answer', () => {
    fc.assert(
      fc.property(request, answer, (interaction, reply) => {
        expect(InteractionRequestSchema.safeParse(interaction).success).toBe(true);
        expect(InteractionAnswerSchema.safeParse(reply).success).toBe(true);
        const before = structuredClone([interaction, reply]);
        const refusal = checkAnswer(interaction, reply);
        expect([interaction, reply]).toEqual(before);
        if (refusal === null) return;
        expect(AgentError.isInstance(refusal)).toBe(true);
        expect(['invalid_command', 'capability_unsupported']).toContain(refusal.code);
        expect(refusal.details?.reason).toMatch(/^[a-z_]+$/);
        expect(SerializedAgentError.safeParse(refusal.toObject()).success).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('accepts an answer that picks real options for every question, and refuses one that names an unknown label', () => {
    fc.assert(
      fc.property(
        fc.array(question, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
        fc.nat(),
        (questions, picks, target) => {
          const interaction: InteractionRequest = {
            kind: 'question_set',
            toolUseId: 'toolu_3',
            questions,
            sensitive: false,
          };
          const fitting = fittingAnswer(questions, picks);
          expect(checkAnswer(interaction, fitting)).toBeNull();
          const index = target % questions.length;
          const unknown = {
            ...fitting,
            answers: fitting.answers.map((item, position) =>
              position === index ? { selected: ['Not an option'] } : item,
            ),
          };
          expect(checkAnswer(interaction, unknown)?.details?.reason).toBe('unknown_label');
        },
      ),
      { numRuns: 200 },
    );
  });
});
