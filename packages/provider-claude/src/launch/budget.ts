import type { SessionConfiguration } from '@tether/protocol';

/**
 * The configuration a new agent process is launched with: maxCostUsd becomes what is left of the
 * session's budget, since the CLI (--max-budget-usd) and the SDK (maxBudgetUsd) count from their
 * own start. Never below zero: a spent budget is refused by the runtime before a turn starts.
 */
export function budgetedConfiguration(configuration: SessionConfiguration, spentCostUsd: number): SessionConfiguration {
  if (configuration.maxCostUsd === undefined || spentCostUsd <= 0) return configuration;
  const left = Math.max(0, configuration.maxCostUsd - spentCostUsd);
  // Rounded to a micro-dollar: the flag's value is printed, and a float's tail means nothing there.
  return { ...configuration, maxCostUsd: Math.round(left * 1_000_000) / 1_000_000 };
}
