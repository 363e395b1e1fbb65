import type { ModelList } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { type SessionSettings, configOptions, sessionModes } from './session-modes.js';

function snapshot(fields: Partial<SessionSettings>): SessionSettings {
  return { configuration: {}, permissionMode: null, modesRequiringRestart: [], model: null, ...fields };
}

const models: ModelList = {
  provider: 'claude',
  agentVersion: '2.1.0',
  models: [
    {
      id: 'default',
      displayName: 'Default',
      description: 'Recommended',
      resolvedModel: 'claude-opus-5-5',
      effortLevels: [],
      supportsFastMode: false,
      supportsAdaptiveThinking: false,
      supportsAutoMode: true,
    },
    {
      id: 'sonnet',
      displayName: 'Sonnet',
      description: 'Fast',
      resolvedModel: 'claude-sonnet-5',
      effortLevels: [],
      supportsFastMode: false,
      supportsAdaptiveThinking: false,
      supportsAutoMode: false,
    },
  ],
};

describe('permission modes and the model as ACP modes and config options', () => {
  it("every permission mode is a mode; the current one is the agent's, else the configured one, else Claude Code's default", () => {
    expect(sessionModes(snapshot({})).currentModeId).toBe('ask_before_edit');
    expect(sessionModes(snapshot({ configuration: { permissionMode: 'plan' } })).currentModeId).toBe('plan');
    expect(
      sessionModes(snapshot({ permissionMode: 'auto_edit', configuration: { permissionMode: 'plan' } })).currentModeId,
    ).toBe('auto_edit');
    const modes = sessionModes(snapshot({ modesRequiringRestart: ['bypass'] })).availableModes;
    expect(modes.map((mode) => mode.id)).toEqual([
      'plan',
      'ask_before_edit',
      'auto_edit',
      'auto',
      'dont_ask',
      'bypass',
    ]);
    expect(modes.find((mode) => mode.id === 'bypass')?.description).toContain('restarts the agent');
  });

  it('the model option matches the model in effect to the alias that resolves to it, else to the alias it was given', () => {
    const options = configOptions(snapshot({ model: 'claude-sonnet-5' }), models, true);
    expect(options.map((option) => option.id)).toEqual(['mode', 'model']);
    expect(options[1]).toMatchObject({
      category: 'model',
      currentValue: 'sonnet',
      options: [{ value: 'default' }, { value: 'sonnet' }],
    });
    // Given as an alias and reported resolved: the alias, even where another alias resolves to the same model first.
    const aliased = snapshot({ model: 'claude-opus-5-5', configuration: { model: 'sonnet' } });
    expect(configOptions(aliased, models, true)[1]).toMatchObject({ currentValue: 'sonnet' });
    expect(configOptions(snapshot({}), models, true)[1]).toMatchObject({ currentValue: 'default' });
  });

  it('the value this client chose while it is the model in effect, where aliases resolve to one model', () => {
    const withOpus: ModelList = {
      ...models,
      models: [...models.models, { ...models.models[0]!, id: 'opus', displayName: 'Opus' }],
    };
    // Recorded resolved: without the choice, the first alias resolving to it.
    const set = snapshot({ model: 'claude-opus-5-5', configuration: { model: 'claude-opus-5-5' } });
    const chose = (value: string, resolved: string | null = 'claude-opus-5-5') => ({ value, resolved });
    expect(configOptions(set, withOpus, true)[1]).toMatchObject({ currentValue: 'default' });
    expect(configOptions(set, withOpus, true, chose('opus'))[1]).toMatchObject({ currentValue: 'opus' });
    expect(configOptions(set, withOpus, true, chose('default'))[1]).toMatchObject({ currentValue: 'default' });
    // Set from the next turn, answered as given.
    expect(
      configOptions(snapshot({ configuration: { model: 'opus' } }), withOpus, true, chose('opus', 'opus'))[1],
    ).toMatchObject({ currentValue: 'opus' });
    // Under way (not answered yet): what the session is changing to.
    expect(configOptions(snapshot({ model: 'claude-sonnet-5' }), withOpus, true, chose('opus', null))[1]).toMatchObject(
      { currentValue: 'opus' },
    );
    // Before the list is read: the choice, by the model the set answered.
    expect(configOptions(set, null, true, chose('opus'))[1]).toMatchObject({
      currentValue: 'opus',
      options: [{ value: 'default' }, { value: 'opus', name: 'opus' }],
    });
    // Changed since by another host: the choice no longer says what runs.
    expect(configOptions(set, withOpus, true, chose('sonnet', 'claude-sonnet-5'))[1]).toMatchObject({
      currentValue: 'default',
    });
  });

  it('a model the list lacks (Claude Code takes any id) is the current value, added to the choices', () => {
    const options = configOptions(snapshot({ model: 'gpt-17', configuration: { model: 'gpt-17' } }), models, true);
    expect(options[1]).toMatchObject({
      currentValue: 'gpt-17',
      options: [{ value: 'default' }, { value: 'sonnet' }, { value: 'gpt-17', name: 'gpt-17' }],
    });
  });

  it('before the list is read (or without one): the model in effect and the default; nothing when the model cannot be set', () => {
    expect(configOptions(snapshot({}), null, true)[1]).toMatchObject({
      currentValue: 'default',
      options: [{ value: 'default', name: 'Default' }],
    });
    expect(configOptions(snapshot({ configuration: { model: 'haiku' } }), null, true)[1]).toMatchObject({
      currentValue: 'haiku',
      options: [{ value: 'default' }, { value: 'haiku' }],
    });
    expect(configOptions(snapshot({}), null, false).map((option) => option.id)).toEqual(['mode']);
    expect(configOptions(snapshot({}), models, false).map((option) => option.id)).toEqual(['mode', 'model']);
  });
});
