import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAnswerLines } from './answers-source.js';

let directory: string;

beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'tether-answers-source-'));
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const ref = (digit: string) => `int_${digit.repeat(32)}`;
const answerLine = (interactionRef: string) => JSON.stringify({ ref: interactionRef, answer: { decision: 'approve' } });

/** Follows `file`, collecting the refs of the lines read; `read(n)` resolves once n have been. */
function follow(file: string) {
  const refs: string[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const stop = readAnswerLines(file, new PassThrough(), {
    line: (parsed) => {
      refs.push(parsed.ok ? parsed.line.ref : `(${parsed.problem})`);
      for (const waiter of waiters.filter((each) => refs.length >= each.count)) waiter.resolve();
    },
    ended: () => refs.push('(ended)'),
    failed: (error) => refs.push(`(failed: ${error.message})`),
  });
  const read = (count: number) =>
    refs.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve }));
  return { refs, read, stop };
}

describe('an --answers regular file, followed as it grows', () => {
  it('reads a line written in pieces once its newline comes, and a last line without one once it is a whole answer', async () => {
    const file = path.join(directory, 'answers.jsonl');
    writeFileSync(file, `${answerLine(ref('1'))}\n`);
    const followed = follow(file);
    try {
      await followed.read(1);
      const second = answerLine(ref('2'));
      appendFileSync(file, second.slice(0, 12));
      appendFileSync(file, `${second.slice(12)}\nnot json\n`);
      await followed.read(3);
      appendFileSync(file, answerLine(ref('3')));
      await followed.read(4);
      expect(followed.refs).toEqual([ref('1'), ref('2'), '(not JSON)', ref('3')]);
    } finally {
      followed.stop();
    }
  });

  it('reads a file cut shorter than what was read from its start again', async () => {
    const file = path.join(directory, 'answers.jsonl');
    writeFileSync(file, `${answerLine(ref('1'))}\n${answerLine(ref('2'))}\n`);
    const followed = follow(file);
    try {
      await followed.read(2);
      writeFileSync(file, `${answerLine(ref('3'))}\n`);
      await followed.read(3);
      expect(followed.refs).toEqual([ref('1'), ref('2'), ref('3')]);
    } finally {
      followed.stop();
    }
  });
});
