import type { StreamEventFrame } from './cli-frame-schemas.js';
import { isNullishString, isPlainObject } from './plain-values.js';

/**
 * A stream_event is most of what the CLI prints while it streams (one per text or thinking delta),
 * and checking each against its zod schema cost more than everything else done with it. These are
 * the plain shapes a delta, a block's start and stop, and a message's delta and stop take: what is
 * accepted here the schema accepts too, and parses to an equal value (a plain object parses to a
 * copy of itself). Anything else (a message_start's message, a content block, a uuid list, the
 * abandoned blocks of a call that broke off, an unusual value) is left to the schema, so what is refused stays exactly what the schema refuses.
 */
function isPlainDelta(delta: unknown): boolean {
  if (delta == null) return true;
  return (
    isPlainObject(delta) &&
    isNullishString(delta['type']) &&
    isNullishString(delta['text']) &&
    isNullishString(delta['thinking']) &&
    isNullishString(delta['stop_reason'])
  );
}

/** The frame itself when it is a stream_event of a plain shape; null when the schema must decide. */
export function plainStreamEvent(value: Record<string, unknown>): StreamEventFrame | null {
  if (!isPlainObject(value) || value['type'] !== 'stream_event') return null;
  if (
    !isNullishString(value['parent_tool_use_id']) ||
    !isNullishString(value['user_message_uuid']) ||
    value['user_message_uuids'] != null ||
    value['abandoned_blocks'] != null
  )
    return null;
  const event = value['event'];
  if (!isPlainObject(event) || typeof event['type'] !== 'string') return null;
  const index = event['index'];
  if (index != null && !(typeof index === 'number' && Number.isFinite(index))) return null;
  if (event['message'] != null || event['content_block'] != null) return null;
  return isPlainDelta(event['delta']) ? (value as StreamEventFrame) : null;
}
