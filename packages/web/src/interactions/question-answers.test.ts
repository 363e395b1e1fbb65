import type { Question } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { answersFor, emptyDraft, toggleOption } from './question-answers.js';

const single: Question = {
  header: 'Color',
  question: 'Which color?',
  options: [
    { label: 'Red', description: '' },
    { label: 'Blue', description: '' },
  ],
  multiSelect: false,
};
const multi: Question = {
  header: 'Sizes',
  question: 'Which sizes?',
  options: [
    { label: 'S', description: '' },
    { label: 'M', description: '' },
    { label: 'L', description: '' },
  ],
  multiSelect: true,
};

describe('question answers', () => {
  it('keeps one option for a single-select question and the listed order for a multi-select one', () => {
    expect(toggleOption(single, toggleOption(single, emptyDraft, 'Red', true), 'Blue', true).selected).toEqual([
      'Blue',
    ]);
    const ticked = toggleOption(multi, toggleOption(multi, emptyDraft, 'L', true), 'S', true);
    expect(ticked.selected).toEqual(['S', 'L']);
    expect(toggleOption(multi, ticked, 'L', false).selected).toEqual(['S']);
  });

  it('answers every question in order: text over options, else an explicit skip', () => {
    expect(
      answersFor(
        [single, multi, single],
        [{ selected: ['Red'], text: '  ' }, { selected: ['S'], text: 'all of them' }, emptyDraft],
      ),
    ).toEqual([{ selected: ['Red'] }, { text: 'all of them' }, { skipped: true }]);
  });
});
