import { describe, expect, it } from 'vitest';
import { modeLabel, modelLabel, snapshotSettings } from './session-settings.js';

describe('the settings a snapshot says a session runs with', () => {
  it('takes what the agent last reported over what the session was opened with', () => {
    expect(
      snapshotSettings({
        model: 'claude-opus-5-5',
        permissionMode: 'ask_before_edit',
        configuration: { model: 'opus', permissionMode: 'plan' },
      }),
    ).toEqual({ model: 'claude-opus-5-5', mode: 'ask_before_edit' });
  });

  it('falls back to the opening configuration before the agent reported anything', () => {
    expect(
      snapshotSettings({ model: null, permissionMode: null, configuration: { model: 'opus', permissionMode: 'plan' } }),
    ).toEqual({
      model: 'opus',
      mode: 'plan',
    });
  });

  it('says default for nothing known, and ignores configuration values that are not a model or a mode', () => {
    const settings = snapshotSettings({
      model: null,
      permissionMode: null,
      configuration: { model: 7, permissionMode: 'yolo' },
    });
    expect(settings).toEqual({ model: null, mode: null });
    expect([modelLabel(settings.model), modeLabel(settings.mode)]).toEqual(['default model', 'default mode']);
    expect(modeLabel('auto_edit')).toBe('Auto-edit');
  });
});
