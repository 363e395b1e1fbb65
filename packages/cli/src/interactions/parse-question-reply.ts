import type { Question, QuestionAnswerItem } from '@tether/protocol';

/**
 * A typed reply to one question: option numbers ("2", or "1,3" when multi-select), free text
 * (anything else; in quotes, text that would read as numbers), or nothing (skipped). Numbers that
 * name no option, or several for a single choice, are not taken as text the person did not mean:
 * null, and the question is asked again (`retryHint` says how to answer).
 */
export function parseQuestionReply(question: Question, reply: string): QuestionAnswerItem | null {
  const text = reply.trim();
  if (text.length === 0) return { skipped: true };
  const quoted = /^"(.*)"$/s.exec(text);
  if (quoted) return quoted[1]!.trim().length > 0 ? { text: quoted[1]! } : { skipped: true };
  const numbers = text.split(/\s*,\s*/);
  if (!numbers.every((part) => /^\d+$/.test(part))) return { text };
  const indexes = numbers.map((part) => Number(part) - 1);
  const valid =
    indexes.every((index) => index >= 0 && index < question.options.length) &&
    new Set(indexes).size === indexes.length &&
    (question.multiSelect || indexes.length === 1);
  return valid ? { selected: indexes.map((index) => question.options[index]!.label) } : null;
}

/** What to type instead, after a reply parseQuestionReply did not take. */
export function retryHint(question: Question): string {
  const range = `1 to ${question.options.length}`;
  return question.multiSelect
    ? `  (numbers from ${range}, each once, separated by commas; your own words; or "in quotes" for text that is a number)`
    : `  (one number from ${range}; your own words; or "in quotes" for text that is a number)`;
}
