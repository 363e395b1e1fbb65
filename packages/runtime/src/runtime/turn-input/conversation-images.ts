import { type InputPart, type ProtocolEvent, imageLimits } from '@tether/protocol';
import { runsInConversation } from '../../state/conversation-branches.js';
import { compactedRuns } from '../commands/branch-events.js';
import { sessionEvents } from '../session-events.js';
import type { TetherStore } from '../../store/tether-store.js';
import { inputRefusal } from './input-refusal.js';

interface ImageTotal {
  readonly count: number;
  readonly bytes: number;
}

/** One input's images: how many, and their bytes. */
function imagesOf(input: readonly InputPart[] | null): ImageTotal {
  let count = 0;
  let bytes = 0;
  for (const part of input ?? [])
    if (part.type === 'image') {
      count += 1;
      bytes += part.byteLength;
    }
  return { count, bytes };
}

/**
 * The images the agent's conversation carries now, and those already on their way into it: Claude
 * Code sends every earlier image again with each request, so the Messages API's per-request limits
 * apply to the conversation, not to one turn. The runs still in it (rewinds taken out), from after its
 * last compaction or /clear (which replaced what came before with a summary, or with nothing), with
 * the inputs steered into them; then every follow-up still queued (it enters the conversation before
 * a turn submitted now does). A redacted turn's images are not known and not counted, nor are those a
 * fork copied from its source.
 */
export function imagesInConversation(events: readonly ProtocolEvent[]): ImageTotal {
  const live = runsInConversation(events);
  const restarted = new Set([
    ...compactedRuns(events),
    ...events.flatMap((event) => (event.type === 'context.cleared' ? [event.runId] : [])),
  ]);
  const since = live.reduce((start, runId, index) => (restarted.has(runId) ? index + 1 : start), 0);
  const counted = new Set(live.slice(since));
  const queued = new Map<string, ImageTotal>();
  let count = 0;
  let bytes = 0;
  const add = (images: ImageTotal | undefined) => {
    count += images?.count ?? 0;
    bytes += images?.bytes ?? 0;
  };
  for (const event of events) {
    if (event.type === 'run.started' && counted.has(event.runId)) add(imagesOf(event.input));
    else if (event.type === 'input.queued') queued.set(event.inputId, imagesOf(event.input));
    else if (event.type === 'input.folded') {
      if (counted.has(event.runId)) add(queued.get(event.inputId));
      queued.delete(event.inputId);
    } else if (event.type === 'input.started' || event.type === 'input.cancelled') queued.delete(event.inputId);
  }
  for (const images of queued.values()) add(images);
  return { count, bytes };
}

/** What imagesInConversation reads: the runs, what took runs out or restarted the conversation, and the inputs queued. */
const countedEventTypes: ReadonlySet<ProtocolEvent['type']> = new Set([
  'run.started',
  'session.rewound',
  'context.compacted',
  'context.cleared',
  'input.queued',
  'input.folded',
  'input.started',
  'input.cancelled',
]);

/** The images of the session's conversation and of the inputs on their way into it (imagesInConversation). */
export async function conversationImages(store: TetherStore, sessionId: string): Promise<ImageTotal> {
  const events: ProtocolEvent[] = [];
  for await (const event of sessionEvents(store, sessionId)) if (countedEventTypes.has(event.type)) events.push(event);
  return imagesInConversation(events);
}

/**
 * Refuses a turn whose images, with those the conversation already carries, pass what one request
 * may hold: the API would refuse the request, and every later one (the turn's input stays in the
 * conversation). Said at submit, with the ways on.
 */
export function checkConversationImages(earlier: ImageTotal, turn: readonly InputPart[]): void {
  const images = turn.filter((part) => part.type === 'image');
  if (images.length === 0 || earlier.count === 0) return;
  const count = earlier.count + images.length;
  const bytes = earlier.bytes + images.reduce((total, part) => total + part.byteLength, 0);
  const wayOn =
    'Start a new session, fork the conversation at a turn before its images, or compact it (/compact) first.';
  if (count > imageLimits.maxImages)
    throw inputRefusal(
      'too_many_images',
      `The conversation already carries ${earlier.count} images, which the agent sends again with every request; with this turn's ${images.length} it would be ${count}, past the ${imageLimits.maxImages} one request may hold. ${wayOn}`,
    );
  if (bytes > imageLimits.maxTotalBytes)
    throw inputRefusal(
      'images_too_large_together',
      `The conversation's images, which the agent sends again with every request, would add up to more than ${imageLimits.maxTotalBytes / 1024 / 1024} MB with this turn's. ${wayOn}`,
    );
}
