import { describe, expect, it } from 'vitest';
import { shownInput } from './shown-input.js';

describe('shownInput', () => {
  it('folds a run of blank lines, so a padded command keeps what it runs last in view', () => {
    const command = `echo hello${'\n'.repeat(120)}rm -rf ~/project`;
    const shown = shownInput(command);
    expect(shown).toBe('echo hello\n… (119 blank lines) …\nrm -rf ~/project');
    // Lines of spaces or tabs are blank too.
    expect(shownInput('a\n  \n\t\nb')).toBe('a\n… (2 blank lines) …\nb');
  });

  it('keeps a single blank line and the text itself as they are', () => {
    expect(shownInput('cd src\n\nnpm test')).toBe('cd src\n\nnpm test');
    expect(shownInput('one line')).toBe('one line');
    // A plan is markdown: its blank lines separate paragraphs, and markdown never shows a run of them.
    expect(shownInput('Step one.\n\n\nStep two.', { markdown: true })).toBe('Step one.\n\n\nStep two.');
  });

  it('writes out bidirectional controls and bounds a huge input', () => {
    expect(shownInput('ls \u202Etxt.exe')).toBe('ls <U+202E>txt.exe');
    const shown = shownInput('x'.repeat(25_000));
    expect(shown.endsWith('… (5,000 more characters)')).toBe(true);
  });
});
