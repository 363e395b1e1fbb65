import { describe, expect, it } from 'vitest';
import { fileMention, userMessage } from './user-message.js';

const uuid = '5f0c4a52-1d1e-4d8e-9a65-3f7c2b9e0d11';
const png = { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' } as const;
const gif = { type: 'image', mediaType: 'image/gif', data: 'R0lGODlh' } as const;

describe('userMessage', () => {
  it('sends a lone text part as a plain string, stamped with the uuid', () => {
    expect(userMessage([{ type: 'text', text: 'hello' }], uuid)).toEqual({
      type: 'user',
      message: { role: 'user', content: 'hello' },
      parent_tool_use_id: null,
      uuid,
    });
  });

  it('keeps several text parts as text blocks in order', () => {
    expect(
      userMessage(
        [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
        uuid,
      ).message.content,
    ).toEqual([
      { type: 'text', text: 'one' },
      { type: 'text', text: 'two' },
    ]);
  });

  it('puts images in their position as base64 image blocks with the same bytes', () => {
    expect(userMessage([png, { type: 'text', text: 'between' }, gif], uuid).message.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'text', text: 'between' },
      { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGODlh' } },
    ]);
  });

  it('sends a lone image as an array, never as a string', () => {
    expect(userMessage([png], uuid).message.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ]);
  });

  it('turns file parts into @-mentions in one last text block, after everything else', () => {
    expect(
      userMessage(
        [
          { type: 'file', path: '/w/notes.txt', workspacePath: 'notes.txt' },
          { type: 'text', text: 'compare these' },
          png,
          { type: 'file', path: '/w/docs/with space.md', workspacePath: 'docs/with space.md' },
        ],
        uuid,
      ).message.content,
    ).toEqual([
      { type: 'text', text: 'compare these' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'text', text: '@notes.txt @"docs/with space.md"' },
    ]);
  });

  it('sends a file part alone as its mention, a plain string', () => {
    expect(userMessage([{ type: 'file', path: '/w/src', workspacePath: 'src' }], uuid).message.content).toBe('@src');
  });
});

describe('fileMention', () => {
  it('leaves plain paths unquoted', () => {
    expect(fileMention('notes.txt')).toBe('@notes.txt');
    expect(fileMention('src/user-message_v2.ts')).toBe('@src/user-message_v2.ts');
    expect(fileMention('sub/')).toBe('@sub/');
  });

  it('quotes paths with spaces, other characters, or a trailing dot', () => {
    expect(fileMention('with space.txt')).toBe('@"with space.txt"');
    expect(fileMention('notes (old).txt')).toBe('@"notes (old).txt"');
    expect(fileMention('café.md')).toBe('@"café.md"');
    expect(fileMention('ends.')).toBe('@"ends."');
  });

  it('leaves a path holding a double quote unquoted (it cannot be quoted)', () => {
    expect(fileMention('say"hi".txt')).toBe('@say"hi".txt');
  });

  it('names a workspace entry whose name starts with "~" through "./": the CLI reads a leading "~" as the home folder', () => {
    expect(fileMention('~/notes.txt')).toBe('@"./~/notes.txt"');
    expect(fileMention('~')).toBe('@"./~"');
    expect(fileMention('~draft.md')).toBe('@"./~draft.md"');
    expect(fileMention('docs/~notes.txt')).toBe('@"docs/~notes.txt"');
  });
});
