import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTetherClient } from '@tether/client';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, spawnTether, tetherBin } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-answer-text-');
const { serve } = useTetherServe(fixture);

function tether(args: string[]): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment }).finished;
}

/** What a stream wrote so far, and a wait for what it writes next (bounded, so a test that never sees it fails saying what it got). */
function collect(stream: NodeJS.ReadableStream): {
  text(): string;
  matching(pattern: RegExp, withinMs: number): Promise<void>;
} {
  let text = '';
  const waiters = new Set<() => void>();
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    text += chunk;
    for (const waiter of [...waiters]) waiter();
  });
  return {
    text: () => text,
    matching: (pattern, withinMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(text)) return;
          waiters.delete(check);
          clearTimeout(bound);
          resolve();
        };
        const bound = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no ${pattern} within ${withinMs} ms in:\n${text}`));
        }, withinMs);
        waiters.add(check);
        check();
      }),
  };
}

describe('the answer on stdout', () => {
  it('puts the text after a tool call on a line of its own, not glued to the text before it', async () => {
    await writeFile(path.join(fixture.workspace, 'hello.txt'), 'hi there\n');
    fixture.api.enqueue(
      toolUseReply('Read', { file_path: path.join(fixture.workspace, 'hello.txt') }, { text: 'Let me read it.' }),
      textReply('The file says hi.', { chunks: 3 }),
    );
    const result = await tether(['run', 'What does hello.txt say?']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Let me read it.\nThe file says hi.\n');
  });

  it("renders the model's terminal controls inert: escapes, OSC links, BEL, 8-bit (C1) controls, a carriage return", async () => {
    fixture.api.enqueue(
      textReply(
        'A\u001b[2J clear \u001b]8;;https://evil.example\u0007link\u001b]8;;\u0007 bell\u0007 csi\u009b31mred\u009b0m osc\u009d0;title\u009c cr\rover crlf\r\nend',
        { chunks: 1 },
      ),
    );
    const result = await tether(['run', 'Say something nasty']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('A clear link bell csi31mred0m osc0;title crover crlf\nend\n');
  });

  it('writes out bidirectional controls, so text cannot be shown in an order other than its own (Trojan Source)', async () => {
    fixture.api.enqueue(textReply('run \u202erm -rf ~\u202c and \u2066isolated\u2069 done', { chunks: 2 }));
    const result = await tether(['run', 'Say something tricky']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('run <U+202E>rm -rf ~<U+202C> and <U+2066>isolated<U+2069> done\n');
  });
});

describe('tether attach', () => {
  it('shows each run of the session: its prompt, its answer on lines of its own, and how it ended', async () => {
    const url = await serve();
    const token = (await tether(['token'])).stdout.trim();
    const client = createTetherClient({ url, token });
    const { sessionId } = await client.openSession({ workspace: { kind: 'directory', path: fixture.workspace } });
    const attach = spawn(process.execPath, [tetherBin, 'attach', sessionId], {
      cwd: fixture.workspace,
      env: fixture.environment,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout = collect(attach.stdout);
    const stderr = collect(attach.stderr);
    const detached = new Promise<number | null>((resolve) => attach.once('close', resolve));
    await stderr.matching(/attached to/, 30_000);

    fixture.api.enqueue(textReply('First answer.', { chunks: 2 }), textReply('Second answer.', { chunks: 2 }));
    for (const prompt of ['Say one thing.', 'Say another.']) {
      const { runId } = await client.submitTurn({ sessionId, input: [{ type: 'text', text: prompt }] });
      for await (const event of client.subscribe(sessionId, { afterSeq: 0 })) {
        if (event.type === 'run.completed' && event.runId === runId) break;
      }
    }
    await stderr.matching(/✓ succeeded[^\n]*\n[\s\S]*✓ succeeded/, 20_000);
    attach.kill('SIGINT');
    expect(await detached).toBe(0);

    expect(stdout.text()).toBe('First answer.\nSecond answer.\n');
    expect(stderr.text()).toContain('› Say one thing.\n');
    expect(stderr.text()).toContain('› Say another.\n');
    expect(stderr.text()).toMatch(/✓ succeeded · \d+ in \/ \d+ out tokens · [^\n]* · run run_[0-9a-f]{32}\n/);
  });
});
