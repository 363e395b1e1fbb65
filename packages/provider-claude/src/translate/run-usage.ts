import type { TokenUsage } from '@tether/protocol';
import type { ResultFrame } from '../frames/cli-frame-schemas.js';
import type { ActiveTurn, StreamedTokens, TranslatorState } from './translator-state.js';

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.trunc(value) : 0;
}

function runCost(state: TranslatorState, frame: ResultFrame): number | null {
  const total = typeof frame.total_cost_usd === 'number' ? frame.total_cost_usd : null;
  const previous = state.lastCumulativeCostUsd;
  if (total !== null) state.lastCumulativeCostUsd = total;
  const sinceLast = frame.model_usage_since_last_result;
  if (sinceLast) {
    const costs = Object.values(sinceLast).map((usage) => usage.costUSD ?? 0);
    return costs.reduce((sum, cost) => sum + cost, 0);
  }
  if (total === null) return null;
  // total_cost_usd is cumulative per process: this run's cost is the difference.
  return Math.max(0, previous === null ? total : total - previous);
}

type Tokens = Omit<TokenUsage, 'costUsd'>;

/**
 * The tokens of the calls the turn made, per model, summed: the same calls its cost covers. The
 * result's `usage` counts the main loop's finished answers only, so an interrupted turn's reads 0
 * (the call was cut), and subagents' calls are left out; the per-model counts hold them, a cut
 * call's output estimated from what had streamed.
 */
function modelTokens(sinceLast: NonNullable<ResultFrame['model_usage_since_last_result']>): Tokens {
  const tokens = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  for (const usage of Object.values(sinceLast)) {
    tokens.inputTokens += count(usage['inputTokens']);
    tokens.outputTokens += count(usage['outputTokens']);
    tokens.cacheReadTokens += count(usage['cacheReadInputTokens']);
    tokens.cacheCreationTokens += count(usage['cacheCreationInputTokens']);
  }
  return tokens;
}

/**
 * What the run used and cost, from its result frame: the per-model counts since the last result
 * where the CLI gives them, else (an older CLI) the result's `usage` and the growth of its
 * per-process cumulative cost. Updates the cost baseline in `state`.
 */
export function runUsage(state: TranslatorState, frame: ResultFrame): TokenUsage {
  const costUsd = runCost(state, frame);
  const sinceLast = frame.model_usage_since_last_result;
  if (sinceLast) return { ...modelTokens(sinceLast), costUsd };
  const usage = frame.usage;
  return {
    inputTokens: count(usage?.input_tokens),
    outputTokens: count(usage?.output_tokens),
    cacheReadTokens: count(usage?.cache_read_input_tokens),
    cacheCreationTokens: count(usage?.cache_creation_input_tokens),
    costUsd,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * Notes the tokens a model call's stream reports: its message_start gives the input and cache
 * counts, its message_delta the running totals (output, and input again when the CLI cuts a call).
 * A field the frame leaves out keeps what an earlier one said.
 */
export function noteStreamedUsage(turn: ActiveTurn, call: string, usage: unknown): void {
  if (!isRecord(usage)) return;
  turn.streamedUsage ??= new Map();
  const tokens = turn.streamedUsage.get(call) ?? {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
  };
  const fields: ReadonlyArray<readonly [keyof StreamedTokens, string]> = [
    ['inputTokens', 'input_tokens'],
    ['outputTokens', 'output_tokens'],
    ['cacheReadTokens', 'cache_read_input_tokens'],
    ['cacheCreationTokens', 'cache_creation_input_tokens'],
  ];
  for (const [field, name] of fields) if (typeof usage[name] === 'number') tokens[field] = count(usage[name]);
  turn.streamedUsage.set(call, tokens);
}

/**
 * What a run that ended without the CLI's result used, as far as its stream said: the calls' counts
 * summed, no cost (the CLI prices, and it never said). Null when nothing was counted.
 */
export function streamedRunUsage(turn: ActiveTurn): TokenUsage | null {
  if (!turn.streamedUsage) return null;
  const usage: TokenUsage = {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    costUsd: null,
  };
  for (const call of turn.streamedUsage.values()) {
    usage.inputTokens += call.inputTokens;
    usage.outputTokens += call.outputTokens;
    usage.cacheReadTokens += call.cacheReadTokens;
    usage.cacheCreationTokens += call.cacheCreationTokens;
  }
  const anything = usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheCreationTokens > 0;
  return anything ? usage : null;
}
