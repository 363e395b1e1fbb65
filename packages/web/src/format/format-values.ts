import type { TokenUsage } from '@tether/protocol';

export function formatCost(costUsd: number | null): string {
  if (costUsd === null) return '—';
  return costUsd < 0.01 ? `$${costUsd.toFixed(4)}` : `$${costUsd.toFixed(2)}`;
}

export function formatTokens(usage: TokenUsage): string {
  return `${usage.inputTokens.toLocaleString('en')} in / ${usage.outputTokens.toLocaleString('en')} out tokens`;
}

/** "just now", "5 min ago", "3 h ago", else the date. */
export function formatRelativeTime(iso: string, now: number): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 45) return 'just now';
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.round(seconds / 3600)} h ago`;
  return new Date(then).toLocaleDateString('en', { year: 'numeric', month: 'short', day: 'numeric' });
}

export const permissionModeLabels: Record<string, string> = {
  plan: 'Plan',
  ask_before_edit: 'Ask before edits',
  auto_edit: 'Auto-edit',
  auto: 'Auto',
  dont_ask: "Don't ask",
  bypass: 'Bypass',
};
