import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { creatorOf } from '../process/creator-named-folders.js';
import { privateTextFolderPrefix, writePrivateTextFile } from './system-prompt-file.js';

describe('a private text file for claude to read', () => {
  it('holds the text where only this user can read it, and goes with its folder once removed', () => {
    const file = writePrivateTextFile('Answer in French.');
    expect(readFileSync(file.path, 'utf8')).toBe('Answer in French.');
    expect(statSync(file.path).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file.path)).mode & 0o777).toBe(0o700);
    file.remove();
    file.remove();
    expect(existsSync(path.dirname(file.path))).toBe(false);
  });

  it.runIf(process.platform === 'linux')(
    'lies in a folder named for this process, so a host started after a SIGKILL can tell it a leftover',
    () => {
      const file = writePrivateTextFile('Answer in French.');
      try {
        expect(creatorOf(path.basename(path.dirname(file.path)), privateTextFolderPrefix)?.pid).toBe(process.pid);
      } finally {
        file.remove();
      }
    },
  );
});
