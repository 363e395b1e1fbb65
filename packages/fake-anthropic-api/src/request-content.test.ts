import { describe, expect, it } from 'vitest';
import { readAttachedFiles, readUserBlocks } from './request-content.js';

describe('readUserBlocks', () => {
  it('reads text, base64 images and other blocks in order; a string is one text block', () => {
    expect(
      readUserBlocks([
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'text', text: 'between' },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x' } },
      ]),
    ).toEqual([
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'text', text: 'between' },
      { type: 'other', blockType: 'document' },
    ]);
    expect(readUserBlocks('hello')).toEqual([{ type: 'text', text: 'hello' }]);
    expect(readUserBlocks(undefined)).toEqual([]);
  });
});

describe('readAttachedFiles', () => {
  it('pairs each synthetic Read call with its result, as the claude CLI (2.1.332) sends an @-mention', () => {
    // The shape a prompt with two mentions reached the fake API in.
    const messages = [
      {
        role: 'user',
        content:
          '<system-reminder>\nCalled the Read tool with the following input: {"file_path":"/w/notes.txt"}\n</system-reminder>',
      },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: '<system-reminder>\nResult of calling the Read tool:\n1\tNOTES\n2\t\n</system-reminder>\n',
          },
          {
            type: 'text',
            text: '<system-reminder>\nCalled the Read tool with the following input: {"file_path":"/w/with space.txt"}\n</system-reminder>\n',
          },
          {
            type: 'text',
            text: '<system-reminder>\nResult of calling the Read tool:\n1\tSPACE\n2\t\n</system-reminder>',
          },
          { type: 'text', text: '@notes.txt @"with space.txt"' },
        ],
      },
    ];
    expect(readAttachedFiles(messages)).toEqual([
      { filePath: '/w/notes.txt', content: '1\tNOTES\n2\t' },
      { filePath: '/w/with space.txt', content: '1\tSPACE\n2\t' },
    ]);
  });

  it('finds nothing in a request without mentions', () => {
    expect(readAttachedFiles([{ role: 'user', content: 'look at @notes.txt' }])).toEqual([]);
    expect(readAttachedFiles(undefined)).toEqual([]);
  });
});
