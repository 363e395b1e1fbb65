import { PassThrough } from 'node:stream';
import type { ApprovalRequest } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { TerminalPrompter } from './terminal-prompter.js';

/** A terminal as the prompter meets it: keys typed into `input`, what it drew in `drawn`, `columns` wide. */
function terminal(columns: number) {
  const input = Object.assign(new PassThrough(), { isRaw: false, isTTY: true, setRawMode: () => input });
  let drawn = '';
  const output = Object.assign(new PassThrough(), { columns, isTTY: true });
  output.on('data', (chunk: Buffer) => {
    drawn += chunk.toString();
  });
  return {
    prompter: new TerminalPrompter(input as unknown as NodeJS.ReadStream, output as unknown as NodeJS.WriteStream),
    type: (keys: string) => input.write(keys),
    drawn: () => drawn,
  };
}

const approval: ApprovalRequest = {
  kind: 'approval',
  toolName: 'Bash',
  toolUseId: 'toolu_1',
  category: 'command',
  input: { command: 'touch /repo/a-file-with-a-long-name/x' },
  offerSessionApproval: true,
  defaultToNo: false,
  sessionGrant: { rules: ['Bash(touch /repo/a-file-with-a-long-name/x:*)'], directories: [] },
};

describe('the approval menu at a narrow terminal', () => {
  it('redraws over every row its wrapped choices took, and clears below: no stale copies with old marks', async () => {
    const { prompter, type, drawn } = terminal(40);
    const answered = prompter.ask(approval, new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    const firstDraw = drawn();
    // Each choice line, as drawn, takes ceil(length / 40) rows.
    const rows = firstDraw
      .split('\u001b[2K')
      .slice(1)
      .map((line) => Math.max(1, Math.ceil(Array.from(line.replace(/\n$/, '')).length / 40)))
      .reduce((total, count) => total + count, 0);
    expect(rows).toBeGreaterThan(approval.sessionGrant!.rules.length + 3);
    type('\u001b[B');
    await new Promise((resolve) => setImmediate(resolve));
    expect(drawn().slice(firstDraw.length)).toMatch(new RegExp(`^\\u001b\\[${rows}A\\u001b\\[J`));
    type('\r');
    expect(await answered).toMatchObject({ decision: 'approve' });
  });
});
