import { describe, expect, it } from 'vitest';
import { chooseMode, shownMode } from './chosen-mode.js';

describe('the mode the controls menu shows', () => {
  it('is the session’s mode, or the default while the agent has named none', () => {
    expect(shownMode(null, null)).toBe('ask_before_edit');
    expect(shownMode(null, 'plan')).toBe('plan');
  });

  it('keeps a pick made before the agent named its mode when the agent names the default it was shown', () => {
    const chosen = chooseMode('bypass', null);
    expect(shownMode(chosen, null)).toBe('bypass');
    expect(shownMode(chosen, 'ask_before_edit')).toBe('bypass');
  });

  it('drops a pick once the session’s mode changes to another', () => {
    expect(shownMode(chooseMode('bypass', null), 'plan')).toBe('plan');
    expect(shownMode(chooseMode('bypass', 'plan'), 'auto_edit')).toBe('auto_edit');
    expect(shownMode(chooseMode('bypass', 'plan'), 'plan')).toBe('bypass');
  });
});
