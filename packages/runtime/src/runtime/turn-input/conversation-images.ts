import { type InputPart, type ProtocolEvent, imageLimits } from '@tether/protocol';
import { runsInConversation } from '../../state/conversation-branches.js';
import { compactedRuns } from '../commands/branch-events.js';
import { inputRefusal } from './input-refusal.js';

interface ImageTotal {
  readonly count: number;
  readonly bytes: number;
}

/**
 * The images the agent's conversation carries now: Claude Code sends every earlier image again with
 * each request, so the Messages API's per-request limits apply to the conversation, not to one turn.
 * The runs still in it (rewinds and /clear taken out), from after its last compaction (which replaced
 * what came before with a summary); a redacted turn's images are not known and not counted, nor are
 * those a fork copied from its source.
 */
export function imagesInConversation(events: readonly ProtocolEvent[]): ImageTotal {
  const live = runsInConversation(events);
  const compacted = compactedRuns(events);
  const since = live.reduce((start, runId, index) => (compacted.has(runId) ? index + 1 : start), 0);
  const counted = new Set(live.slice(since));
  let count = 0;
  let bytes = 0;
  for (const event of events) {
    if (event.type !== 'run.started' || !counted.has(event.runId) || event.input === null) continue;
    for (const part of event.input)
      if (part.type === 'image') {
        count += 1;
        bytes += part.byteLength;
      }
  }
  return { count, bytes };
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
