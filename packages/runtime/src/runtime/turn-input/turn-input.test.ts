import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type SubmitTurnCommand, imageLimits } from '@tether/protocol';
import {
  type MockProvider,
  agentErrorOf,
  createMockProvider,
  gifBytes,
  jpegBytes,
  type mockCapabilities,
  pngBytes,
  webpBytes,
} from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createInMemoryStore } from '../../store/in-memory-store.js';
import type { CommitUnit, TetherStore } from '../../store/tether-store.js';
import { createAgentRuntime } from '../agent-runtime.js';
import type { AgentRuntime } from '../runtime-types.js';

const allParts = { images: true, inputParts: ['text', 'image', 'file'] };
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let outside: string;
let workspace: string;
let store: TetherStore;
let provider: MockProvider;
let runtime: AgentRuntime;
let sessionId: string;

async function start(capabilities: Partial<typeof mockCapabilities> = allParts, redactInput = false): Promise<void> {
  store = createInMemoryStore();
  provider = createMockProvider({ capabilities });
  runtime = await createAgentRuntime({ providers: [provider], store });
  ({ sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: workspace }, redactInput }));
}

beforeEach(async () => {
  outside = await mkdtemp(path.join(os.tmpdir(), 'tether-turn-input-'));
  workspace = path.join(outside, 'workspace');
  await mkdir(path.join(workspace, 'src'), { recursive: true });
});

afterEach(async () => {
  await runtime?.shutdown();
  await rm(outside, { recursive: true, force: true });
});

async function submit(input: unknown[], extra: Partial<SubmitTurnCommand> = {}) {
  const receipt = await runtime.submitTurn({ sessionId, input: input as SubmitTurnCommand['input'], ...extra });
  await runtime.waitForRun(receipt.runId);
  return receipt;
}

/** A refused turn: the error, after checking that nothing reached the log, the store or the agent. */
async function refusedTurn(input: unknown[]) {
  const before = await runtime.readEvents(sessionId);
  const error = await agentErrorOf(runtime.submitTurn({ sessionId, input: input as SubmitTurnCommand['input'] }));
  expect(await runtime.readEvents(sessionId)).toEqual(before);
  expect((await runtime.getSession(sessionId)).state).toBe('idle');
  expect(provider.sessions.flatMap((session) => session.turns)).toEqual([]);
  return error;
}

describe('submit_turn with images and file references', () => {
  it('records images by reference with their blob in the same commit, and hands the agent their bytes', async () => {
    await start();
    const png = pngBytes(640, 480);
    const jpeg = jpegBytes(300, 200);
    await writeFile(path.join(workspace, 'shot.jpg'), jpeg);
    const units: CommitUnit[] = [];
    const commit = store.commit.bind(store);
    store.commit = (unit) => {
      units.push(unit);
      return commit(unit);
    };
    const { runId } = await submit([
      { type: 'text', text: 'Why does this page fail?' },
      { type: 'image', mediaType: 'image/png', data: base64(png) },
      { type: 'image', path: 'shot.jpg' },
      { type: 'image', path: path.join(workspace, 'shot.jpg') },
    ]);

    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'run.started');
    expect(started).toMatchObject({
      runId,
      inputRedacted: false,
      input: [
        { type: 'text', text: 'Why does this page fail?' },
        { type: 'image', mediaType: 'image/png', sha256: sha256(png), byteLength: png.length, width: 640, height: 480 },
        {
          type: 'image',
          mediaType: 'image/jpeg',
          sha256: sha256(jpeg),
          byteLength: jpeg.length,
          width: 300,
          height: 200,
        },
        { type: 'image', mediaType: 'image/jpeg', sha256: sha256(jpeg) },
      ],
    });
    expect(provider.sessions[0]!.turns[0]!.input).toEqual([
      { type: 'text', text: 'Why does this page fail?' },
      { type: 'image', mediaType: 'image/png', data: base64(png) },
      { type: 'image', mediaType: 'image/jpeg', data: base64(jpeg) },
      { type: 'image', mediaType: 'image/jpeg', data: base64(jpeg) },
    ]);
    // Each image once, in the transaction that records the event naming it.
    const recording = units.find((unit) => unit.events.some((event) => event.type === 'run.started'))!;
    expect(recording.blobs.map((blob) => [blob.sha256, blob.mediaType, blob.sessionId])).toEqual([
      [sha256(png), 'image/png', sessionId],
      [sha256(jpeg), 'image/jpeg', sessionId],
    ]);
    expect(await store.readBlob(sessionId, sha256(png))).toEqual({ mediaType: 'image/png', bytes: png });
    expect(await runtime.readBlob(sessionId, sha256(jpeg))).toEqual({ mediaType: 'image/jpeg', bytes: jpeg });
    expect((await runtime.getSession(sessionId)).title).toBe('Why does this page fail?');
  });

  it('takes GIF and every WebP encoding, judged by their bytes', async () => {
    await start();
    const images = [gifBytes(20, 10), webpBytes(100, 50, 'lossy'), webpBytes(100, 50, 'lossless'), webpBytes(8000, 10)];
    await submit(
      images.map((bytes, index) => ({
        type: 'image',
        mediaType: index === 0 ? 'image/gif' : 'image/webp',
        data: base64(bytes),
      })),
    );
    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'run.started');
    expect(started).toMatchObject({
      input: [
        { mediaType: 'image/gif', width: 20, height: 10 },
        { mediaType: 'image/webp', width: 100, height: 50 },
        { mediaType: 'image/webp', width: 100, height: 50 },
        { mediaType: 'image/webp', width: 8000, height: 10 },
      ],
    });
  });

  it('records a file reference as its workspace path and gives the agent the absolute one (a directory too)', async () => {
    await start();
    await writeFile(path.join(workspace, 'src', 'index.ts'), 'export {};');
    await submit([
      { type: 'text', text: 'Explain' },
      { type: 'file', path: 'src/index.ts' },
      { type: 'file', path: path.join(workspace, 'src') },
    ]);
    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'run.started');
    expect(started).toMatchObject({
      input: [
        { type: 'text', text: 'Explain' },
        { type: 'file', path: 'src/index.ts' },
        { type: 'file', path: 'src' },
      ],
    });
    expect(provider.sessions[0]!.turns[0]!.input.slice(1)).toEqual([
      { type: 'file', path: path.join(workspace, 'src', 'index.ts'), workspacePath: 'src/index.ts' },
      { type: 'file', path: path.join(workspace, 'src'), workspacePath: 'src' },
    ]);
  });

  it('stores no blob and records no input when the input is redacted, yet hands the agent the image', async () => {
    await start(allParts, true);
    const png = pngBytes(2, 2);
    await submit([{ type: 'image', mediaType: 'image/png', data: base64(png) }]);
    const started = (await runtime.readEvents(sessionId)).find((event) => event.type === 'run.started');
    expect(started).toMatchObject({ input: null, inputRedacted: true });
    expect(await store.readBlob(sessionId, sha256(png))).toBeUndefined();
    expect(provider.sessions[0]!.turns[0]!.input).toEqual([
      { type: 'image', mediaType: 'image/png', data: base64(png) },
    ]);
    // A turn that overrides redaction stores its image.
    await submit([{ type: 'image', mediaType: 'image/png', data: base64(png) }], { redactInput: false });
    expect(await store.readBlob(sessionId, sha256(png))).toEqual({ mediaType: 'image/png', bytes: png });
  });

  it('refuses a bad part with invalid_command and its reason, changing nothing', async () => {
    await start();
    const png = pngBytes(10, 10);
    await writeFile(path.join(outside, 'secret.txt'), 'not yours');
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'link.txt'));
    await writeFile(
      path.join(workspace, 'huge.png'),
      Buffer.concat([pngBytes(10, 10), Buffer.alloc(imageLimits.maxBytes)]),
    );
    await writeFile(path.join(workspace, 'notes.png'), 'plain text, named like an image');
    await writeFile(path.join(workspace, 'issue#12.md'), 'a name the mention syntax reads as a line range');
    await writeFile(path.join(workspace, 'say "hi" now.txt'), 'unquotable');
    await writeFile(path.join(workspace, ' lead.txt'), 'trimmed away by the agent');
    await writeFile(path.join(workspace, 'notes.txt"'), 'its closing quote dropped by the agent');
    // Inside the workspace; in a mention, the agent would read the line "@/etc/hostname" as a mention of its own.
    await mkdir(path.join(workspace, 'a\n@', 'etc'), { recursive: true });
    await writeFile(path.join(workspace, 'a\n@', 'etc', 'hostname\nb'), 'a name with line breaks');
    await writeFile(path.join(workspace, 'tab\there.txt'), 'a control character');
    execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
    await writeFile(path.join(workspace, 'empty.png'), '');
    const cases: [unknown[], string, RegExp][] = [
      [[{ type: 'image', mediaType: 'image/png', data: 'not base64!' }], 'image_invalid_base64', /base64/],
      [
        [{ type: 'image', mediaType: 'image/png', data: `data:image/png;base64,${base64(png)}` }],
        'image_invalid_base64',
        /data: URL/,
      ],
      [[{ type: 'image', mediaType: 'image/jpeg', data: base64(png) }], 'image_media_type_mismatch', /"image\/png"/],
      [[{ type: 'image', path: 'notes.png' }], 'not_an_image', /PNG, JPEG, GIF or WebP/],
      [[{ type: 'image', path: 'empty.png' }], 'not_an_image', /is empty \(0 bytes\)/],
      [
        [{ type: 'image', mediaType: 'image/png', data: base64(png.subarray(0, 20)) }],
        'image_unreadable',
        /damaged or cut short/,
      ],
      [[{ type: 'image', path: 'missing.png' }], 'image_unreadable_file', /missing\.png/],
      [[{ type: 'image', path: 'src' }], 'image_unreadable_file', /is not a file \(a folder, or a device\)/],
      [[{ type: 'image', path: 'huge.png' }], 'image_too_large', /limit is 5\.0 MB/],
      [
        [{ type: 'image', mediaType: 'image/png', data: base64(pngBytes(8001, 10)) }],
        'image_dimensions_too_large',
        /8000/,
      ],
      [
        [{ type: 'file', path: path.join(outside, 'secret.txt') }],
        'file_outside_workspace',
        /outside the session's workspace/,
      ],
      [[{ type: 'file', path: '../secret.txt' }], 'file_outside_workspace', /outside/],
      [[{ type: 'file', path: 'link.txt' }], 'file_outside_workspace', /leads to/],
      [[{ type: 'file', path: 'src/nothing.ts' }], 'file_not_found', /does not exist.*a relative path is resolved/],
      // An absolute path (what the CLI sends, made absolute against its own directory) is told no such hint.
      [[{ type: 'file', path: path.join(workspace, 'nothing.ts') }], 'file_not_found', /inside the workspace\.$/],
      [[{ type: 'image', path: path.join(workspace, 'missing.png') }], 'image_unreadable_file', /Check the path and/],
      [[{ type: 'file', path: 'issue#12.md' }], 'file_not_mentionable', /Rename it/],
      [[{ type: 'file', path: 'say "hi" now.txt' }], 'file_not_mentionable', /Rename it/],
      [[{ type: 'file', path: ' lead.txt' }], 'file_not_mentionable', /whitespace at its start or end/],
      // The agent drops a closing '"': it would attach notes.txt, another file.
      [[{ type: 'file', path: 'notes.txt"' }], 'file_not_mentionable', /a '"' at its end/],
      [
        [{ type: 'file', path: 'a\n@/etc/hostname\nb' }],
        'file_not_mentionable',
        /line break or other control character/,
      ],
      [[{ type: 'file', path: 'tab\there.txt' }], 'file_not_mentionable', /control character/],
      // The agent would block reading it (the CLI waits ~20 s on a pipe nobody writes to).
      [[{ type: 'file', path: 'pipe' }], 'file_not_regular', /neither a regular file nor a directory/],
    ];
    for (const [input, reason, message] of cases) {
      const error = await refusedTurn([{ type: 'text', text: 'look' }, ...input]);
      expect(error, reason).toMatchObject({ code: 'invalid_command', details: { reason, index: 1 } });
      // Counted from 1 for a person: the second of two parts.
      expect(error.message).toMatch(/^Input part 2 of 2/);
      expect(error.message).toMatch(message);
    }
  });

  it('refuses too many images, too large together, and images too wide for a turn with many', async () => {
    await start();
    const small = { type: 'image', mediaType: 'image/png', data: base64(pngBytes(10, 10)) };
    expect(await refusedTurn(Array.from({ length: imageLimits.maxImages + 1 }, () => small))).toMatchObject({
      code: 'invalid_command',
      details: { reason: 'too_many_images' },
    });
    const many = Array.from({ length: imageLimits.manyImages }, () => small);
    const wide = { type: 'image', mediaType: 'image/png', data: base64(pngBytes(2001, 10)) };
    expect(await refusedTurn([...many, wide])).toMatchObject({ details: { reason: 'image_dimensions_too_large' } });
    // Each under 5 MB, five of them over the 24 MB a turn may carry.
    const large = Buffer.concat([pngBytes(10, 10), Buffer.alloc(imageLimits.maxBytes - 100)]);
    await writeFile(path.join(workspace, 'large.png'), large);
    const error = await refusedTurn(Array.from({ length: 5 }, () => ({ type: 'image', path: 'large.png' })));
    expect(error).toMatchObject({ details: { reason: 'images_too_large_together', index: 4 } });
    expect(error.message).toMatch(/^Input part 5 of 5: with it, the turn's images add up to more than 24 MB/);
  });

  it('refuses images and file references a provider cannot take with capability_unsupported, before reading them', async () => {
    await start({ images: false, inputParts: ['text', 'image'] });
    const image = await refusedTurn([
      { type: 'text', text: 'x' },
      { type: 'image', path: 'never-read.png' },
    ]);
    expect(image).toMatchObject({ code: 'capability_unsupported', details: { reason: 'images' } });
    expect(image.message).toMatch(/part 1/);
    const file = await refusedTurn([{ type: 'file', path: 'never-read.txt' }]);
    expect(file).toMatchObject({ code: 'capability_unsupported', details: { reason: 'input_part_type' } });
  });

  it('answers a closed session before looking at the input', async () => {
    await start();
    await runtime.closeSession({ sessionId });
    const closed = await agentErrorOf(
      runtime.submitTurn({ sessionId, input: [{ type: 'image', path: 'missing.png' }] }),
    );
    expect(closed.code).toBe('session_closed');
  });
});
