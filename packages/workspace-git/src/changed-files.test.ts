import { describe, expect, it } from 'vitest';
import { parseChangedFiles } from './changed-files.js';

const blob = (digit: string) => digit.repeat(40);

describe('parseChangedFiles', () => {
  it('pairs raw records with their numstat counts: renames, binaries, odd paths', () => {
    const listing = [
      `:100644 100644 ${blob('1')} ${blob('2')} M`,
      'src/app.txt',
      `:000000 100644 ${blob('0')} ${blob('3')} A`,
      'image.bin',
      `:100644 100644 ${blob('4')} ${blob('5')} R087`,
      'old name.txt',
      'new\tname.txt',
      `:100644 000000 ${blob('6')} ${blob('0')} D`,
      '\tleading-tab.txt',
      `:100644 120000 ${blob('7')} ${blob('8')} T`,
      'link',
      '2\t1\tsrc/app.txt',
      '-\t-\timage.bin',
      '1\t0\t',
      'old name.txt',
      'new\tname.txt',
      '0\t3\t\tleading-tab.txt',
      '1\t1\tlink',
      '',
    ].join('\0');

    expect(parseChangedFiles(listing)).toEqual([
      { path: 'src/app.txt', status: 'modified', added: 2, removed: 1, binary: false },
      { path: 'image.bin', status: 'added', added: null, removed: null, binary: true },
      { path: 'new\tname.txt', previousPath: 'old name.txt', status: 'renamed', added: 1, removed: 0, binary: false },
      { path: '\tleading-tab.txt', status: 'deleted', added: 0, removed: 3, binary: false },
      { path: 'link', status: 'modified', added: 1, removed: 1, binary: false },
    ]);
  });

  it('reads an empty listing as no change', () => {
    expect(parseChangedFiles('')).toEqual([]);
  });
});
