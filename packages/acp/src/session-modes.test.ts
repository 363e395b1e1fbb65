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

  it('the model option matches the model in effect to the alias that resolves to it; no list, no model option', () => {
    const options = configOptions(snapshot({ model: 'claude-sonnet-5' }), models);
    expect(options.map((option) => option.id)).toEqual(['mode', 'model']);
    expect(options[1]).toMatchObject({
      category: 'model',
      currentValue: 'sonnet',
      options: [{ value: 'default' }, { value: 'sonnet' }],
    });
    expect(configOptions(snapshot({}), null).map((option) => option.id)).toEqual(['mode']);
  });
});
