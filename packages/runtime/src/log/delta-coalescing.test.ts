import { deltaTextLimit, type EventBody, type EventBodyOfType } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { addStagedEvent } from './delta-coalescing.js';
import type { StagedEvent } from './event-writer.js';

const runId = 'run_0123456789abcdef0123456789abcdef';
const at = '2026-12-01T00:00:00.000Z';

function staged(body: EventBody, sessionId = 'ses_a', when = at): StagedEvent {
  return { sessionId, body, at: when };
}

const text = (value: string, blockId = 'm:0'): EventBodyOfType<'run.message_delta'> => ({
  type: 'run.message_delta',
  runId,
  blockId,
  text: value,
});

function batch(...events: StagedEvent[]): StagedEvent[] {
  const result: StagedEvent[] = [];
  for (const event of events) addStagedEvent(result, event);
  return result;
}

describe('addStagedEvent', () => {
  it('joins deltas of one block waiting for the same commit: the text in order, the first one’s time', () => {
    const joined = batch(
      staged(text('Hel')),
      staged(text('lo'), 'ses_a', '2026-12-01T00:00:00.004Z'),
      staged(text(', world')),
    );
    expect(joined).toEqual([staged(text('Hello, world'))]);
  });

  it('leaves the staged deltas it joined as they were (only its own joined event grows)', () => {
    const first = staged(text('a'));
    const second = staged(text('b'));
    const third = staged(text('c'));
    const joined = batch(first, second, third, staged(text('d')));
    expect(joined).toEqual([staged(text('abcd'))]);
    expect([first, second, third].map((event) => (event.body as { text: string }).text)).toEqual(['a', 'b', 'c']);
    // A later batch that starts from one of them again joins from its own text.
    expect(batch(second, staged(text('x')))).toEqual([staged(text('bx'))]);
  });

  it('keeps apart what is not the same block of the same kind, run, subagent and session', () => {
    const thinking: EventBody = { type: 'run.thinking_delta', runId, blockId: 'm:0', text: 'b' };
    const subagent: EventBody = { ...text('c'), parentToolUseId: 'toolu_1' };
    const otherRun: EventBody = { ...text('d'), runId: 'run_ffffffffffffffffffffffffffffffff' };
    const events = [
      staged(text('a')),
      staged(thinking),
      staged(subagent),
      staged(otherRun),
      staged(text('e', 'm:1')),
      staged(text('f'), 'ses_b'),
    ];
    expect(batch(...events)).toEqual(events);
  });

  it('never joins across another event of the session, but does across other sessions’ events', () => {
    const usage: EventBody = { type: 'diagnostic', level: 'debug', code: 'x' };
    expect(batch(staged(text('a')), staged(usage), staged(text('b')))).toEqual([
      staged(text('a')),
      staged(usage),
      staged(text('b')),
    ]);
    expect(batch(staged(text('a')), staged(text('x'), 'ses_b'), staged(text('b')))).toEqual([
      staged(text('ab')),
      staged(text('x'), 'ses_b'),
    ]);
  });

  it('stops joining at the protocol’s text limit, and the texts still add up to the same characters', () => {
    const half = 'x'.repeat(deltaTextLimit / 2);
    const exactly = batch(staged(text(half)), staged(text(half)));
    expect(exactly).toHaveLength(1);
    const over = batch(staged(text(half)), staged(text(half)), staged(text('y')));
    expect(over.map((event) => (event.body as { text: string }).text)).toEqual([half + half, 'y']);
  });
});
