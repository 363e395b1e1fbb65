import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser.js';

describe('SseParser', () => {
  it('parses id and data frames, ignores comments, joins data lines', () => {
    const parser = new SseParser();
    const frames = parser.push(': ping\n\nid: 1\ndata: {"a":1}\n\nevent: overflow\ndata: first\ndata: second\n\n');
    expect(frames).toEqual([
      { id: '1', event: 'message', data: '{"a":1}' },
      { id: undefined, event: 'overflow', data: 'first\nsecond' },
    ]);
  });

  it('handles frames cut anywhere, including between \\r and \\n', () => {
    const text = '\uFEFFid: 7\r\ndata:no-space\r\n\r\nid: 8\rdata: x\r\r\n';
    const whole = new SseParser().push(text);
    for (let cut = 0; cut <= text.length; cut += 1) {
      const parser = new SseParser();
      expect([...parser.push(text.slice(0, cut)), ...parser.push(text.slice(cut))]).toEqual(whole);
    }
    expect(whole).toEqual([
      { id: '7', event: 'message', data: 'no-space' },
      { id: '8', event: 'message', data: 'x' },
    ]);
  });

  it('never returns a frame still open when the input stops', () => {
    const parser = new SseParser();
    expect(parser.push('id: 3\ndata: {"type":"half')).toEqual([]);
    expect(parser.push('\n')).toEqual([]);
  });

  it('skips frames without data and ignores unknown fields and retry', () => {
    expect(new SseParser().push('id: 4\n\nretry: 10\nfield\ndata\n\n')).toEqual([
      { id: undefined, event: 'message', data: '' },
    ]);
  });
});
