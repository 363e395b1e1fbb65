import type { ResultFrame } from './cli-frame-schemas.js';
import {
  isNullishBoolean,
  isNullishNumber,
  isNullishString,
  isNullishStringList,
  isPlainObject,
} from './plain-values.js';

/**
 * The result frame ends every turn, and its zod check took ~0.15 ms on a host whose code had gone
 * cold while the model answered: a stop or a short turn ended that much later. These are the plain
 * shapes of the fields ResultFrame declares: what is accepted here the schema accepts too, and
 * parses to an equal value; anything else is left to the schema, so what is refused stays exactly
 * what the schema refuses.
 */
const nullishStrings = [
  'session_id',
  'terminal_reason',
  'startup_failure_reason',
  'stop_reason',
  'result',
  'local_command',
  'user_message_uuid',
] as const;
const nullishNumbers = ['api_error_status', 'total_cost_usd', 'num_turns'] as const;
const usageCounts = [
  'input_tokens',
  'output_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
] as const;

function isPlainUsage(usage: unknown): boolean {
  if (usage == null) return true;
  if (!isPlainObject(usage)) return false;
  for (const key of usageCounts) if (!isNullishNumber(usage[key])) return false;
  return true;
}

function isPlainModelUsage(models: unknown): boolean {
  if (models == null) return true;
  if (!isPlainObject(models)) return false;
  for (const key in models) {
    const model = models[key];
    if (!isPlainObject(model) || !isNullishNumber(model['costUSD'])) return false;
  }
  return true;
}

/** The frame itself when it is a result of a plain shape; null when the schema must decide. */
export function plainResultFrame(value: Record<string, unknown>): ResultFrame | null {
  if (!isPlainObject(value) || value['type'] !== 'result' || typeof value['subtype'] !== 'string') return null;
  for (const key of nullishStrings) if (!isNullishString(value[key])) return null;
  for (const key of nullishNumbers) if (!isNullishNumber(value[key])) return null;
  if (!isNullishBoolean(value['is_error'])) return null;
  if (!isNullishStringList(value['errors']) || !isNullishStringList(value['user_message_uuids'])) return null;
  if (!isPlainUsage(value['usage']) || !isPlainModelUsage(value['model_usage_since_last_result'])) return null;
  return value as ResultFrame;
}
