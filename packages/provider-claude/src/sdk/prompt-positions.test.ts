import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { markPromptPositions, positionMarkerOf } from './prompt-positions.js';

async function copied(chunks: string[]): Promise<string[]> {
  const source = new PassThrough();
  const output = markPromptPositions(source);
  const collected: string[] = [];
  output.on('data', (chunk: Buffer) => collected.push(chunk.toString('utf8')));
  const ended = new Promise((resolve) => output.on('end', resolve));
  for (const chunk of chunks) source.write(chunk);
  source.end();
  await ended;
  return collected.join('').split('\n');
}

describe("position markers for the SDK's copy of stdout", () => {
  it('puts a marker in front of each prompt and withdrawal, keeps every line as it was, across chunk splits', async () => {
    const prompt = JSON.stringify({
      type: 'control_request',
      request_id: 'r1',
      request: { subtype: 'can_use_tool', tool_name: 'Bash' },
    });
    const cancel = JSON.stringify({ type: 'control_cancel_request', request_id: 'r1' });
    const other = JSON.stringify({ type: 'control_response', response: { request_id: 'x', subtype: 'success' } });
    const ping = '{"type":"stream_event","event":{"type":"ping"}}';
    const text = `${ping}\n${prompt}\n${other}\n${cancel}\nnot json\n{"type":"result"}`;
    const lines = await copied([text.slice(0, 30), text.slice(30, 61), text.slice(61)]);
    expect(
      lines.map((line) => positionMarkerOf(line.startsWith('{') ? JSON.parse(line) : line)?.event ?? line.slice(0, 40)),
    ).toEqual([
      ping.slice(0, 40),
      'prompt',
      prompt.slice(0, 40),
      other.slice(0, 40),
      'withdrawal',
      cancel.slice(0, 40),
      'not json',
      '{"type":"result"}',
    ]);
  });

  it('reads markers only: other messages are not markers', () => {
    expect(positionMarkerOf({ type: 'system', subtype: 'tether_position', event: 'prompt', request_id: 'r1' })).toEqual(
      { event: 'prompt', requestId: 'r1' },
    );
    expect(positionMarkerOf({ type: 'system', subtype: 'init' })).toBeUndefined();
    expect(
      positionMarkerOf({ type: 'system', subtype: 'tether_position', event: 'other', request_id: 'r1' }),
    ).toBeUndefined();
    expect(positionMarkerOf(null)).toBeUndefined();
  });
});
