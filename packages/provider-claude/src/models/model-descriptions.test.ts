import { describe, expect, it } from 'vitest';
import { modelsOfInitializeAnswer } from './model-descriptions.js';

describe('modelsOfInitializeAnswer', () => {
  it('describes each model of the initialize answer (2.1.332 shape) and reads the agent version', () => {
    const answer = {
      claude_code_version: '2.1.332',
      models: [
        {
          value: 'sonnet',
          resolvedModel: 'claude-sonnet-5-5',
          displayName: 'Sonnet',
          description: 'Sonnet 5.5 · Efficient for routine tasks · $2/$10 per Mtok',
          supportsEffort: true,
          supportedEffortLevels: ['low', 'medium', 'high', 'xhigh', 'max'],
          supportsAdaptiveThinking: true,
          supportsAutoMode: true,
          supportsThinkingOff: false,
        },
        { value: 'opus', displayName: 'Opus', description: 'Opus 5.5', supportsFastMode: true },
      ],
    };
    expect(modelsOfInitializeAnswer(answer)).toEqual({
      agentVersion: '2.1.332',
      models: [
        {
          id: 'sonnet',
          displayName: 'Sonnet',
          description: 'Sonnet 5.5 · Efficient for routine tasks · $2/$10 per Mtok',
          resolvedModel: 'claude-sonnet-5-5',
          effortLevels: ['low', 'medium', 'high', 'xhigh', 'max'],
          supportsFastMode: false,
          supportsAdaptiveThinking: true,
          supportsAutoMode: true,
        },
        {
          id: 'opus',
          displayName: 'Opus',
          description: 'Opus 5.5',
          resolvedModel: null,
          effortLevels: [],
          supportsFastMode: true,
          supportsAdaptiveThinking: false,
          supportsAutoMode: false,
        },
      ],
    });
  });

  it('leaves out entries it cannot describe, and finds nothing in an answer without models', () => {
    const { models } = modelsOfInitializeAnswer({
      models: [{ displayName: 'no value' }, 'sonnet', { value: '' }, { value: 'haiku' }],
    });
    expect(models.map((model) => model.id)).toEqual(['haiku']);
    expect(models[0]!.displayName).toBe('haiku');
    expect(modelsOfInitializeAnswer({})).toEqual({ models: [], agentVersion: null });
    expect(modelsOfInitializeAnswer(null)).toEqual({ models: [], agentVersion: null });
  });

  it("leaves out the rows list_models marks disabled (shown in Claude Code's picker, not selectable)", () => {
    const { models } = modelsOfInitializeAnswer({
      models: [
        { value: 'default', resolvedModel: 'claude-opus-5-5' },
        { value: 'fable', resolvedModel: 'claude-fable-5-2', disabled: true },
        { value: 'sonnet', resolvedModel: 'claude-sonnet-5-5', disabled: false },
      ],
    });
    expect(models.map((model) => model.id)).toEqual(['default', 'sonnet']);
  });
});
