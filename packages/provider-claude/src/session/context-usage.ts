import type { ContextUsage } from '@tether/protocol';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** The CLI's get_context_usage answer as neutral numbers (only what a host can rely on). */
export function toContextUsage(response: Record<string, unknown> | undefined): ContextUsage {
  const categories = Array.isArray(response?.categories) ? (response.categories as Record<string, unknown>[]) : [];
  return {
    model: typeof response?.model === 'string' ? response.model.slice(0, 200) : null,
    totalTokens: count(response?.totalTokens),
    maxTokens: count(response?.maxTokens),
    percentage: count(response?.percentage),
    categories: categories.slice(0, 100).map((category) => ({
      name: String(category.name ?? category.id ?? 'unknown').slice(0, 200),
      tokens: count(category.tokens),
    })),
  };
}
