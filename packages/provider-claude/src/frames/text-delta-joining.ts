import { plainStreamEvent } from './stream-event-fast-path.js';

/**
 * How often a block's streamed text is handed on while it streams: well within the display frame the
 * runtime's writer commits streamed output at (16 ms, runtime's log/event-writer.ts), so text held here
 * mostly waits for a commit it would have waited for anyway.
 */
export const textReleaseIntervalMs = 5;

/** A block's delta being held: the first one's frame, and the text joined so far. */
interface HeldDelta {
  /** The first delta's parsed line, ours alone: its text is replaced by the joined text on release. */
  readonly frame: Record<string, unknown>;
  readonly delta: Record<string, unknown>;
  readonly field: 'text' | 'thinking';
  readonly index: unknown;
  readonly parentToolUseId: unknown;
  text: string;
  joined: boolean;
}

/** The delta's text field when `value` is a delta line the translator reads only its block and text from. */
function textFieldOf(value: unknown): 'text' | 'thinking' | null {
  if (typeof value !== 'object' || value === null) return null;
  const frame = plainStreamEvent(value as Record<string, unknown>);
  if (!frame || frame.user_message_uuid != null || frame.event.type !== 'content_block_delta') return null;
  const delta = frame.event.delta;
  if (!delta) return null;
  if (delta.type === 'text_delta') return typeof delta.text === 'string' ? 'text' : null;
  if (delta.type === 'thinking_delta') return typeof delta.thinking === 'string' ? 'thinking' : null;
  return null;
}

/**
 * A delta line of the main conversation exactly as the CLI prints it (2.1.x): index, then the text
 * or thinking as a JSON string literal. Whatever else (another key, another order, a subagent's
 * delta, a stamp) does not match and is parsed as any line is. A JSON string's characters are
 * anything from U+0020 but a quote or a backslash (no raw control character), or an escape; escapes
 * are decoded by JSON.parse, which refuses what the whole line's parse would have refused.
 */
const continuationLine =
  /^\{"type":"stream_event","event":\{"type":"content_block_delta","index":(0|[1-9][0-9]*),"delta":\{(?:"type":"text_delta","text":"((?:[ !#-[\]-\uFFFF]|\\.)*)"|"type":"thinking_delta","thinking":"((?:[ !#-[\]-\uFFFF]|\\.)*)")\}\},"session_id":"[ !#-[\]-\uFFFF]*","parent_tool_use_id":null,"uuid":"[ !#-[\]-\uFFFF]*"(?:,"thinking_display":"[ !#-[\]-\uFFFF]*")?(?:,"api_message_id":"[ !#-[\]-\uFFFF]*")?\}$/;

/**
 * The longest line read as text: the pattern's backtracking grows with the line (a 10 MB line overflows
 * the stack); a CLI's deltas are a few tokens, and a longer line is parsed as any other.
 */
const longestTakenLine = 64 * 1024;

/** A JSON string literal's body as text; undefined when JSON would refuse it. */
function decodeStringBody(body: string): string | undefined {
  if (!body.includes('\\')) return body;
  try {
    return JSON.parse(`"${body}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * A streamed turn prints one stream_event line per text or thinking delta: thousands a turn. Each
 * went through everything after the decoder (the frame's checks, the translator, the runtime's
 * part, its session record, the writer), while the runtime commits streamed text at most once per
 * display frame anyway. Consecutive deltas of one content block are therefore handed on as one
 * frame, their texts joined: the first after a quiet spell at the end of the read that brought it
 * (as before: the first byte waits for nothing), later ones at most once per interval, and whatever
 * is held goes before any other line, at the stream's end and when the process exits. The text is
 * the same text of the same block, byte for byte.
 *
 * Only deltas the translator reads nothing else from are joined: unstamped (a stamp starts a turn,
 * so it is read on its own), of one block (event index and subagent), of one kind (text or thinking).
 * Their uuids are not read by anything; the joined frame keeps the first's.
 */
export class TextDeltaJoiner {
  private held: HeldDelta | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastReleaseAt = Number.NEGATIVE_INFINITY;
  private readonly release: (frame: Record<string, unknown>) => void;

  /** `release` gets each held delta (joined or alone), in stdout order. */
  constructor(release: (frame: Record<string, unknown>) => void) {
    this.release = release;
  }

  /**
   * Takes a line's value when it is a joinable delta: joined into the held delta when it continues
   * its block, otherwise held after the held one is released. False: not a delta to join; the
   * caller flushes, then handles it.
   */
  offer(value: unknown): boolean {
    const field = textFieldOf(value);
    if (field === null) return false;
    const frame = value as { parent_tool_use_id?: unknown; event: { index?: unknown; delta: Record<string, unknown> } };
    const { event } = frame;
    const text = event.delta[field] as string;
    const held = this.held;
    if (
      held &&
      held.field === field &&
      held.index === event.index &&
      held.parentToolUseId === frame.parent_tool_use_id
    ) {
      held.text += text;
      held.joined = true;
      return true;
    }
    if (held) this.flush();
    this.held = {
      frame: value as Record<string, unknown>,
      delta: event.delta,
      field,
      index: event.index,
      parentToolUseId: frame.parent_tool_use_id,
      text,
      joined: false,
    };
    const wait = this.lastReleaseAt + textReleaseIntervalMs - performance.now();
    // Not yet due: released when it is (a delta after a quiet spell goes at the end of its read).
    if (wait > 0 && !this.timer) this.timer = setTimeout(() => this.flush(), wait);
    return true;
  }

  /**
   * A line that continues the held block (most of a streamed turn's lines), joined from its text
   * without parsing it: true when taken. Anything else is left to be parsed and offered.
   */
  takeLine(line: string): boolean {
    const held = this.held;
    if (!held || held.parentToolUseId !== null || line.length > longestTakenLine) return false;
    const match = continuationLine.exec(line);
    if (!match || Number(match[1]) !== held.index) return false;
    const body = held.field === 'text' ? match[2] : match[3];
    if (body === undefined) return false;
    const text = decodeStringBody(body);
    if (text === undefined) return false;
    held.text += text;
    held.joined = true;
    return true;
  }

  /** At the end of a read: what is held goes if the interval since the last release has passed. */
  afterRead(): void {
    if (this.held && performance.now() - this.lastReleaseAt >= textReleaseIntervalMs) this.flush();
  }

  /** Releases what is held now: before any other line, at the stream's end, when the process exits. */
  flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const held = this.held;
    if (!held) return;
    this.held = null;
    this.lastReleaseAt = performance.now();
    if (held.joined) held.delta[held.field] = held.text;
    this.release(held.frame);
  }
}
