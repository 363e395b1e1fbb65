import { watch } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DecodedLine } from '../codec/line-decoder.js';
import { ClaudeProcess, type ProcessExit } from './claude-process.js';
import { creatorOf } from './creator-named-folders.js';
import { StdoutChannel, stdoutFolderPrefix, stdoutReadPaceMs } from './stdout-channel.js';
import { StdoutChannels } from './stdout-channels.js';

/** A node child running `script` (CommonJS), its stdout a channel of ours, every read timed. */
async function startNode(script: string, streaming?: () => boolean) {
  const lines: unknown[] = [];
  const reads: number[] = [];
  const exits: { exit: ProcessExit; linesBefore: number }[] = [];
  const child = new ClaudeProcess({
    binaryPath: process.execPath,
    argv: ['-e', script],
    environment: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    cwd: process.cwd(),
    stdoutChannel: await StdoutChannel.open(),
    ...(streaming ? { streaming } : {}),
    onLine: (line: DecodedLine) => lines.push(line.kind === 'json' ? line.value : line),
    afterRead: () => reads.push(performance.now()),
    onExit: (exit) => exits.push({ exit, linesBefore: lines.length }),
  });
  return { child, lines, reads, exits };
}

const started: ClaudeProcess[] = [];

afterEach(async () => {
  vi.useRealTimers();
  await Promise.all(started.splice(0).map((child) => child.stop({ busy: true, force: true })));
});

describe.runIf(process.platform !== 'win32')('a child stdout read through a channel', () => {
  it('reads a burst written line by line at most about once per pace, every line in order', async () => {
    // A line every ~0.1 ms, each its own write: a reader that keeps up reads one line a time.
    const { child, lines, reads, exits } = await startNode(`
      const fs = require('node:fs');
      for (let n = 0; n < 1000; n += 1) {
        const until = performance.now() + 0.1;
        while (performance.now() < until);
        fs.writeSync(1, JSON.stringify({ n }) + '\\n');
      }`);
    started.push(child);
    await child.exited;
    expect(lines).toEqual(Array.from({ length: 1000 }, (_, n) => ({ n })));
    expect(exits).toEqual([{ exit: expect.objectContaining({ kind: 'exited', exitCode: 0 }), linesBefore: 1000 }]);
    // The end of the stream is a read of its own; every other read in the burst waited out the pace
    // (half of it allowed for: a timer may fire early against the clock read here).
    const burst = reads.slice(0, -1);
    const spanMs = burst[burst.length - 1]! - burst[0]!;
    expect(burst.length).toBeLessThanOrEqual(2 + spanMs / (stdoutReadPaceMs / 2));
  });

  it('reads an answer to what was written at once, even in a burst (no pause waits for its timer)', {
    timeout: 20_000,
  }, async () => {
    // Fake timers: a read the pace held back would never be resumed, and the exchange would stall.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { child, lines } = await startNode(`
      const readline = require('node:readline');
      const fs = require('node:fs');
      readline.createInterface({ input: process.stdin }).on('line', (line) => {
        const { ping } = JSON.parse(line);
        fs.writeSync(1, JSON.stringify({ pong: ping }) + '\\n');
        fs.writeSync(1, JSON.stringify({ pong: ping, again: true }) + '\\n');
      });`);
    started.push(child);
    for (let ping = 0; ping < 200; ping += 1) {
      child.write({ ping });
      while (lines.length < (ping + 1) * 2) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(lines.filter((line) => !(line as { again?: boolean }).again)).toEqual(
      Array.from({ length: 200 }, (_, ping) => ({ pong: ping })),
    );
  });

  it('reads a long line as fast as it comes, not a buffer per pause', { timeout: 20_000 }, async () => {
    // Fake timers: a read of the line that waited for the pace would never be resumed.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // process.stdout, not fs.writeSync: the child's end of the pair is non-blocking (see the ADR).
    const { child, lines } = await startNode(`
      const piece = 'x'.repeat(64 * 1024);
      process.stdout.write('{"padding":"');
      for (let n = 0; n < 128; n += 1) process.stdout.write(piece);
      process.stdout.write('"}\\n');
      process.stdin.resume();`);
    started.push(child);
    while (lines.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect((lines[0] as { padding: string }).padding).toHaveLength(128 * 64 * 1024);
  });

  it('never holds back the read after lines the reader says are not a stream', { timeout: 20_000 }, async () => {
    // Fake timers: a read that waited for the pace would never be resumed.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { child, lines } = await startNode(
      `
      const fs = require('node:fs');
      for (let n = 0; n < 500; n += 1) fs.writeSync(1, JSON.stringify({ n }) + '\\n');
      process.stdin.resume();`,
      () => false,
    );
    started.push(child);
    while (lines.length < 500) await new Promise((resolve) => setImmediate(resolve));
    expect(lines.at(-1)).toEqual({ n: 499 });
  });

  it('hands on every line before the exit, also of a child that exits while reading waits', async () => {
    const { child, lines, exits } = await startNode(`
      const fs = require('node:fs');
      for (let n = 0; n < 3000; n += 1) fs.writeSync(1, JSON.stringify({ n }) + '\\n');
      process.exit(7);`);
    started.push(child);
    await child.exited;
    expect(lines).toHaveLength(3000);
    expect(exits).toEqual([{ exit: expect.objectContaining({ kind: 'exited', exitCode: 7 }), linesBefore: 3000 }]);
  });
});

describe.runIf(process.platform !== 'win32')('stdout channels connected ahead', () => {
  it('has one ready once prepared, and tops up what is taken', async () => {
    const channels = new StdoutChannels({ spares: 1 });
    expect(channels.take()).toBeUndefined();
    await channels.prepare();
    const first = channels.take();
    expect(first?.ended).toBe(false);
    await channels.prepare();
    const second = channels.take();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    first?.close();
    second?.close();
    await channels.dispose();
  });

  it('has every spare ready once filled, each a channel of its own', async () => {
    const channels = new StdoutChannels({ spares: 3 });
    await channels.fill();
    const taken = [channels.take(), channels.take(), channels.take()];
    expect(taken.map((channel) => channel?.ended)).toEqual([false, false, false]);
    expect(new Set(taken).size).toBe(3);
    expect(channels.take()).toBeUndefined();
    for (const channel of taken) channel?.close();
    await channels.dispose();
  });

  it('leaves no folder behind: the private one a pair connects through is gone once the pair is ready', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'tether-channel-parent-'));
    try {
      const channel = await StdoutChannel.open(parent);
      expect(await readdir(parent)).toEqual([]);
      channel.close();
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("connects through a folder named for this host (a later host's sweep removes one left by a kill), or a short anonymous one where the socket's path would be too long", async () => {
    const base = await mkdtemp(path.join(os.tmpdir(), 'tether-channel-parent-'));
    try {
      // 74 bytes: the anonymous folder's socket path is then 107 bytes, Linux's longest; a named one's is longer.
      const deep = path.join(base, 'x'.repeat(74 - base.length - 1));
      expect(deep).toHaveLength(74);
      await mkdir(deep);
      /** Opens a channel under `parent` and waits until a folder named as `pattern` says was made there. */
      const folderSeen = async (parent: string, pattern: RegExp) => {
        const seen: string[] = [];
        const watcher = watch(parent, (_event, name) => void (name && seen.push(name)));
        try {
          const channel = await StdoutChannel.open(parent);
          channel.close();
          await vi.waitFor(() => expect(seen).toContainEqual(expect.stringMatching(pattern)));
        } finally {
          watcher.close();
        }
        return seen.find((name) => pattern.test(name))!;
      };
      const named = await folderSeen(base, /^tether-stdout-/);
      expect(creatorOf(named, stdoutFolderPrefix)).toMatchObject({ pid: process.pid });
      // One too long is made first (there its name is known), then let go.
      await folderSeen(deep, /^tether-stdout-[A-Za-z0-9]{6}$/);
    } finally {
      await rm(base, { recursive: true, force: true });
    }
  });

  it('closes what is still ready when disposed', async () => {
    const channels = new StdoutChannels({ spares: 1 });
    await channels.prepare();
    await channels.dispose();
    expect(channels.take()).toBeUndefined();
  });

  it('prepares nothing where no channel can be made (a process then gets a pipe)', async () => {
    const channels = new StdoutChannels({ parent: path.join(os.tmpdir(), 'tether-no-such-folder', 'below') });
    await channels.prepare();
    await channels.fill();
    expect(channels.take()).toBeUndefined();
    await channels.dispose();
  });
});
