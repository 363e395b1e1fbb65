import { describe, expect, it } from 'vitest';
import { modelLabel } from './model-options.js';

const model = {
  id: 'sonnet',
  displayName: 'Sonnet',
  description: 'Best for everyday tasks',
  resolvedModel: null,
  effortLevels: [],
  supportsFastMode: false,
  supportsAdaptiveThinking: false,
  supportsAutoMode: false,
};

describe('a model in the picker', () => {
  it('reads as its name and what it is for, or its id when the agent gives no name', () => {
    expect(modelLabel(model)).toBe('Sonnet — Best for everyday tasks');
    expect(modelLabel({ ...model, description: '' })).toBe('Sonnet');
    expect(modelLabel({ ...model, displayName: '', description: '' })).toBe('sonnet');
  });
});
