import type { Question, QuestionAnswerItem } from '@tether/protocol';

/** What the person has put into one question so far. */
export interface QuestionDraft {
  readonly selected: readonly string[];
  readonly text: string;
}

export const emptyDraft: QuestionDraft = { selected: [], text: '' };

/** Ticks or unticks an option: a single-select question keeps only the latest. */
export function toggleOption(question: Question, draft: QuestionDraft, label: string, checked: boolean): QuestionDraft {
  if (!question.multiSelect) return { ...draft, selected: checked ? [label] : [] };
  const others = draft.selected.filter((selected) => selected !== label);
  // Kept in the order the options are listed, whatever order they were ticked in.
  const selected = checked
    ? question.options.map((option) => option.label).filter((option) => option === label || others.includes(option))
    : others;
  return { ...draft, selected };
}

/** One answer per question, in order: own text wins over ticked options; nothing is an explicit skip. */
export function answersFor(questions: readonly Question[], drafts: readonly QuestionDraft[]): QuestionAnswerItem[] {
  return questions.map((_question, index) => {
    const draft = drafts[index] ?? emptyDraft;
    const text = draft.text.trim();
    if (text !== '') return { text };
    if (draft.selected.length > 0) return { selected: [...draft.selected] };
    return { skipped: true };
  });
}
