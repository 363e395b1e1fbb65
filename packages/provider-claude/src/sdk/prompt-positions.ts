import { PassThrough, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/**
 * The SDK answers the CLI's control traffic outside its message stream: canUseTool runs as soon as
 * the SDK reads a prompt, while the frames read before it may still wait in its queue, and an
 * abort (the CLI's control_cancel_request) likewise overtakes them. To keep the cli transport's
 * order, the CLI's stdout goes to the SDK through this copy, which puts a marker line in front of
 * each prompt and each withdrawal: the SDK passes unknown system messages on, so the marker
 * reaches our reader exactly where the control line stood, and the connection raises or withdraws
 * the prompt there. Markers never reach the session.
 */
export const positionSubtype = 'tether_position';

export interface PositionMarker {
  readonly event: 'prompt' | 'withdrawal';
  readonly requestId: string;
}

/** The marker a message is, or undefined for any other message. */
export function positionMarkerOf(message: unknown): PositionMarker | undefined {
  const value = message as { type?: unknown; subtype?: unknown; event?: unknown; request_id?: unknown } | null;
  if (value?.type !== 'system' || value.subtype !== positionSubtype || typeof value.request_id !== 'string')
    return undefined;
  return value.event === 'prompt' || value.event === 'withdrawal'
    ? { event: value.event, requestId: value.request_id }
    : undefined;
}

function markerFor(line: string): string | undefined {
  // Cheap test first: only control lines can need a marker, and they are a handful per turn.
  if (!line.includes('"control_')) return undefined;
  let value: { type?: unknown; request_id?: unknown; request?: { subtype?: unknown } } | null;
  try {
    value = JSON.parse(line) as typeof value;
  } catch {
    return undefined;
  }
  if (typeof value?.request_id !== 'string') return undefined;
  const event =
    value.type === 'control_request' && value.request?.subtype === 'can_use_tool'
      ? 'prompt'
      : value.type === 'control_cancel_request'
        ? 'withdrawal'
        : undefined;
  return event
    ? `${JSON.stringify({ type: 'system', subtype: positionSubtype, event, request_id: value.request_id })}\n`
    : undefined;
}

/** A copy of `source` (the CLI's stdout) with a marker line in front of each prompt and withdrawal. */
export function markPromptPositions(source: Readable): Readable {
  const output = new PassThrough();
  const decoder = new StringDecoder('utf8');
  let partial = '';
  const write = (text: string) => {
    // The SDK reads as fast as it can; when it does not, the CLI's pipe waits rather than memory growing.
    if (!output.write(text)) {
      source.pause();
      output.once('drain', () => source.resume());
    }
  };
  source.on('data', (chunk: Buffer) => {
    const lines = (partial + decoder.write(chunk)).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const marker = markerFor(line);
      if (marker) write(marker);
      write(`${line}\n`);
    }
  });
  const finish = () => {
    if (output.writableEnded) return;
    const rest = partial + decoder.end();
    partial = '';
    if (rest.length > 0) output.write(rest);
    output.end();
  };
  source.once('end', finish);
  // Destroyed after the exit sweep (a leftover holding the pipe open): the SDK's stream still ends.
  source.once('close', finish);
  source.once('error', finish);
  return output;
}
