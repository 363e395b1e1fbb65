import type { Question, QuestionAnswerItem } from '@tether/protocol';

/**
 * A typed reply to one question: option numbers ("2" or "1,3" when multi-select), free text
 * (anything else), or nothing (skipped).
 */
export function parseQuestionReply(question: Question, reply: string): QuestionAnswerItem {
  const text = reply.trim();
  if (text.length === 0) return { skipped: true };
  const numbers = text.split(/\s*,\s*/);
  if (numbers.every((part) => /^\d+$/.test(part))) {
    const indexes = numbers.map((part) => Number(part) - 1);
    const valid =
      indexes.every((index) => index >= 0 && index < question.options.length) &&
      new Set(indexes).size === indexes.length;
    if (valid && (question.multiSelect || indexes.length === 1)) {
      return { selected: indexes.map((index) => question.options[index]!.label) };
    }
  }
  return { text };
}
