import { describe, expect, it } from 'vitest';
import { sessionTitleMaxLength, turnTitle } from './session-title.js';

const text = (...parts: string[]) => ({ input: parts.map((part) => ({ type: 'text' as const, text: part })) });

describe('a turn title', () => {
  it('is the turn text with whitespace runs collapsed, parts joined by a space', () => {
    expect(turnTitle(text('  Fix the\n\n build\t please  ', 'and test'))).toBe('Fix the build please and test');
  });

  it('is cut to 200 characters with an ellipsis, never through a character', () => {
    const long = turnTitle(text('word '.repeat(100)))!;
    expect(long).toHaveLength(sessionTitleMaxLength);
    expect(long.endsWith(' word…')).toBe(true);
    // A space left at the cut goes, so the ellipsis follows the last word.
    expect(turnTitle(text(`${'x'.repeat(198)} yes`))).toBe(`${'x'.repeat(198)}…`);
    expect(turnTitle(text('x'.repeat(200)))).toBe('x'.repeat(200));
    expect(turnTitle(text('x'.repeat(201)))).toBe(`${'x'.repeat(199)}…`);
    // An emoji (two code units) straddling the cut is left out whole.
    const emoji = turnTitle(text(`${'x'.repeat(198)}😀 and more`))!;
    expect(emoji).toBe(`${'x'.repeat(198)}…`);
  });

  it('is null for a control run, redacted input and whitespace only', () => {
    expect(turnTitle({ ...text('/compact'), control: { name: 'compact' } })).toBeNull();
    expect(turnTitle({ input: null })).toBeNull();
    expect(turnTitle(text(' \n\t '))).toBeNull();
  });
});
