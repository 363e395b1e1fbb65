import { describe, expect, it } from 'vitest';
import { buildSdkOptions } from '../sdk/build-sdk-options.js';
import { buildClaudeArguments } from './build-arguments.js';
import { budgetedConfiguration } from './budget.js';

describe('budgets at launch', () => {
  it('gives a new process what is left of the session budget, never below zero', () => {
    expect(budgetedConfiguration({ maxCostUsd: 1 }, 0)).toEqual({ maxCostUsd: 1 });
    expect(budgetedConfiguration({ maxCostUsd: 1 }, 0.3)).toEqual({ maxCostUsd: 0.7 });
    expect(budgetedConfiguration({ maxCostUsd: 1 }, 0.1 + 0.2)).toEqual({ maxCostUsd: 0.7 });
    expect(budgetedConfiguration({ maxCostUsd: 1 }, 5)).toEqual({ maxCostUsd: 0 });
    expect(budgetedConfiguration({ maxTurns: 3 }, 5)).toEqual({ maxTurns: 3 });
  });

  it('passes maxTurns and maxCostUsd as --max-turns and --max-budget-usd, and as the SDK options', () => {
    const configuration = { maxTurns: 4, maxCostUsd: 0.25 };
    const conversation = { kind: 'new', providerSessionId: 'id' } as const;
    const argv = buildClaudeArguments({ configuration, conversation, ephemeral: false });
    expect(argv.join(' ')).toContain('--max-turns 4 --max-budget-usd 0.25');
    const options = buildSdkOptions(
      { configuration, conversation, ephemeral: false, cwd: '/w', environment: {} },
      '/bin/claude',
    );
    expect(options).toMatchObject({ maxTurns: 4, maxBudgetUsd: 0.25 });
    expect(buildClaudeArguments({ configuration: {}, conversation, ephemeral: false }).join(' ')).not.toContain(
      '--max-',
    );
  });
});
