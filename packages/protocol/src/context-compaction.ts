import type { EventOfType } from './events.js';

type Compaction = Pick<EventOfType<'context.compacted'>, 'trigger' | 'tokensBefore' | 'tokensAfter'>;

/** How hosts word a compaction: "Context compacted by the agent as it filled up: 180,000 → 9,000 tokens". */
export function describeContextCompaction(compaction: Compaction): string {
  const how =
    compaction.trigger === 'automatic' ? 'Context compacted by the agent as it filled up' : 'Context compacted';
  if (compaction.tokensBefore === null && compaction.tokensAfter === null) return how;
  const tokens = (count: number | null) => (count === null ? '?' : count.toLocaleString('en'));
  return `${how}: ${tokens(compaction.tokensBefore)} → ${tokens(compaction.tokensAfter)} tokens`;
}
