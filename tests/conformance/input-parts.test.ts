import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import { holdReply, textReply } from '@tether/fake-anthropic-api';
import { type SubmittedInputPart, imageLimits } from '@tether/protocol';
import { type ClaudeTestEnvironment, agentErrorOf, answerText, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, history, turnRequests } from './conformance-harness.js';

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const checksum = Buffer.alloc(4);
  checksum.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, checksum]);
}

/** A small PNG a decoder accepts (one colour, 8-bit RGB), as base64: the CLI reads real images, not headers. */
function solidPng(width: number, height: number, rgb: readonly [number, number, number]): string {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const row = Buffer.from([0, ...Array.from({ length: width }, () => rgb).flat()]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', pixels),
    pngChunk('IEND', Buffer.alloc(0)),
  ]).toString('base64');
}

/**
 * A PNG of random pixels (stored, not compressed: a real photo's size, not a header's), padded with an
 * ancillary chunk decoders skip to exactly `byteLength` bytes.
 */
function noisePng(side: number, byteLength: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = randomBytes((side * 3 + 1) * side);
  for (let row = 0; row < side; row += 1) rows[row * (side * 3 + 1)] = 0;
  const image = [
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(rows, { level: 0 })),
  ];
  const chunkOverhead = 12;
  const padding = byteLength - Buffer.concat(image).length - 2 * chunkOverhead;
  if (padding < 0) throw new Error(`A ${side}×${side} noise PNG is over ${byteLength} bytes.`);
  return Buffer.concat([...image, pngChunk('tEXt', Buffer.alloc(padding, 0x61)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** The blocks of the last user message of the latest turn request, images and the texts the host sent. */
function sentBlocks(environment: ClaudeTestEnvironment) {
  return turnRequests(environment).at(-1)!.view!.lastUserBlocks;
}

/** One turn with `input` in a new session of the environment's workspace, the model answering `reply`: its events. */
async function runTurn(environment: ClaudeTestEnvironment, input: SubmittedInputPart[], reply: string) {
  environment.api.enqueue(textReply(reply));
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  const { runId } = await runtime.submitTurn({ sessionId, input });
  const events = await runEvents(runtime, sessionId, runId);
  expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  return events;
}

describeTransports('image and file input parts', ({ start }) => {
  it('an image part reaches the model as an image block with the same bytes and media type', async () => {
    const environment = await start();
    const red = solidPng(4, 4, [255, 0, 0]);
    const events = await runTurn(
      environment,
      [
        { type: 'image', mediaType: 'image/png', data: red },
        { type: 'text', text: 'What is this?' },
      ],
      'A red square.',
    );
    expect(answerText(events)).toBe('A red square.');
    const images = sentBlocks(environment).filter((block) => block.type === 'image');
    expect(images).toEqual([{ type: 'image', mediaType: 'image/png', data: red }]);
  });

  it('two images and text keep their order', async () => {
    const environment = await start();
    const red = solidPng(4, 4, [255, 0, 0]);
    const blue = solidPng(3, 2, [0, 0, 255]);
    await runTurn(
      environment,
      [
        { type: 'text', text: 'First:' },
        { type: 'image', mediaType: 'image/png', data: red },
        { type: 'text', text: 'Second:' },
        { type: 'image', mediaType: 'image/png', data: blue },
      ],
      'Red, then blue.',
    );
    // The CLI adds its own texts (reminders before, "[Image: source: …]" notes after): the host's blocks keep their order among them.
    const sent = sentBlocks(environment).flatMap((block) =>
      block.type === 'image'
        ? [block.data]
        : block.type === 'text' && /^(First|Second):/.test(block.text)
          ? [block.text.trim()]
          : [],
    );
    expect(sent).toEqual(['First:', red, 'Second:', blue]);
  });

  it('a file part reaches the model: the request carries the file content the CLI attached', async () => {
    const environment = await start();
    await mkdir(path.join(environment.workspace, 'docs'));
    const notes = path.join(environment.workspace, 'docs', 'release notes.txt');
    await writeFile(notes, 'PLUM-42 shipped on Tuesday\n');
    const plain = path.join(environment.workspace, 'todo.md');
    await writeFile(plain, 'water the ferns\n');
    const events = await runTurn(
      environment,
      [
        { type: 'file', path: 'docs/release notes.txt' },
        { type: 'text', text: 'Summarise both.' },
        { type: 'file', path: plain },
      ],
      'Noted.',
    );
    const request = turnRequests(environment).at(-1)!.view!;
    expect(request.attachedFiles.map((file) => file.filePath)).toEqual([notes, plain]);
    expect(request.attachedFiles[0]!.content).toContain('PLUM-42 shipped on Tuesday');
    expect(request.attachedFiles[1]!.content).toContain('water the ferns');
    expect(request.lastUserText).toContain('Summarise both.');
    const started = events.find((event) => event.type === 'run.started');
    expect(started).toMatchObject({
      input: [
        { type: 'file', path: 'docs/release notes.txt' },
        { type: 'text', text: 'Summarise both.' },
        { type: 'file', path: 'todo.md' },
      ],
    });
  });

  it('a folder part reaches the model as the listing the CLI attaches', async () => {
    const environment = await start();
    await mkdir(path.join(environment.workspace, 'fixtures'));
    await writeFile(path.join(environment.workspace, 'fixtures', 'quince-report.csv'), 'a,b\n');
    await runTurn(
      environment,
      [
        { type: 'text', text: 'What is in there?' },
        { type: 'file', path: 'fixtures' },
      ],
      'One file.',
    );
    expect(history(environment, 0)).toContain('quince-report.csv');
  });

  it('a file under a workspace folder named "~" is that file, never the one of the same name in the home folder', async () => {
    const environment = await start();
    await mkdir(path.join(environment.workspace, '~'));
    const inWorkspace = path.join(environment.workspace, '~', 'plan.txt');
    await writeFile(inWorkspace, 'workspace plan: MEDLAR-7\n');
    // What the agent would read instead if the path were taken as the home folder's: outside the workspace.
    await writeFile(path.join(environment.home, 'plan.txt'), 'home plan: never attach\n');
    await runTurn(environment, [{ type: 'file', path: '~/plan.txt' }], 'Noted.');
    const request = turnRequests(environment).at(-1)!.view!;
    expect(request.attachedFiles.map((file) => file.filePath)).toEqual([inWorkspace]);
    expect(request.attachedFiles[0]!.content).toContain('MEDLAR-7');
    expect(history(environment, 0)).not.toContain('never attach');
  });

  it("a file under a workspace folder named '\"' is that file, never the absolute path its name spells", async () => {
    const environment = await start();
    const outside = path.join(environment.home, 'outside-secret.txt');
    await writeFile(outside, 'outside: never attach\n');
    // The folder `"` holds the rest of the outside file's absolute path, ending in `outside-secret.txt"`.
    const inWorkspace = path.join(environment.workspace, '"', `${outside.slice(1)}"`);
    await mkdir(path.dirname(inWorkspace), { recursive: true });
    await writeFile(inWorkspace, 'workspace file\n');
    // Read as a quote, the mention would name the outside file; its closing '"' makes it unmentionable.
    await expect(
      environment.runtime().then(async (runtime) => {
        const { sessionId } = await runtime.openSession({
          workspace: { kind: 'directory', path: environment.workspace },
        });
        return runtime.submitTurn({ sessionId, input: [{ type: 'file', path: `"${outside}"` }] });
      }),
    ).rejects.toMatchObject({ code: 'invalid_command', details: { reason: 'file_not_mentionable' } });
    // Without the closing '"', the file is the workspace's own, named through "./".
    const leading = path.join(environment.workspace, '"', 'lead.txt');
    await writeFile(leading, 'workspace lead: SORB-3\n');
    await writeFile(path.join(environment.workspace, 'lead.txt'), 'the plain one: never attach\n');
    await runTurn(environment, [{ type: 'file', path: '"/lead.txt' }], 'Noted.');
    const request = turnRequests(environment).at(-1)!.view!;
    expect(request.attachedFiles.map((file) => file.filePath)).toEqual([leading]);
    expect(history(environment, 0)).not.toContain('never attach');
  });

  it("a conversation's images count the follow-ups queued or steered into it, and none from before a /clear", async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Seen.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const images = (count: number): SubmittedInputPart[] =>
      Array.from({ length: count }, () => ({
        type: 'image',
        mediaType: 'image/png',
        data: solidPng(4, 4, [0, 0, 255]),
      }));
    const turn = async (input: SubmittedInputPart[]) =>
      runtime.waitForRun((await runtime.submitTurn({ sessionId, input })).runId);
    await turn(images(40));
    environment.api.enqueue(holdReply());
    const held = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Think a while.' }] });
    await environment.api.waitForRequests(2, { kind: 'turn' });
    const queued = await runtime.submitTurn({ sessionId, input: images(35), delivery: 'after_turn' });
    // 40 in the conversation and 35 queued: 35 more (or 30 steered into the running turn) would pass 100.
    for (const delivery of ['after_turn', 'steer'] as const) {
      const refused = await agentErrorOf(runtime.submitTurn({ sessionId, input: images(30), delivery }));
      expect(refused, delivery).toMatchObject({ code: 'invalid_command', details: { reason: 'too_many_images' } });
      expect(refused.message).toContain('already carries 75 images');
    }
    environment.api.releaseHeld();
    await runtime.waitForRun(held.runId);
    expect(await runtime.waitForRun(queued.runId!)).toMatchObject({ outcome: 'succeeded' });
    expect(sentBlocks(environment).filter((block) => block.type === 'image')).toHaveLength(35);
    // After /clear the agent's conversation is empty: sixty images are a turn like any other.
    await runtime.waitForRun((await runtime.runControl({ sessionId, name: 'clear' })).runId);
    expect(await turn(images(60))).toMatchObject({ outcome: 'succeeded' });
  });

  it('an image of exactly the size limit reaches the model; one byte more is refused at submit, recording nothing', async () => {
    const environment = await start();
    const atLimit = noisePng(1320, imageLimits.maxBytes);
    expect(atLimit.length).toBe(imageLimits.maxBytes);
    await runTurn(
      environment,
      [
        { type: 'image', mediaType: 'image/png', data: atLimit.toString('base64') },
        { type: 'text', text: 'Describe the noise.' },
      ],
      'Static.',
    );
    // The CLI re-encodes a photo this large (as JPEG): the model gets an image, not a note that it could not be read.
    const blocks = sentBlocks(environment);
    expect(blocks.filter((block) => block.type === 'image')).toHaveLength(1);
    expect(blocks.some((block) => block.type === 'text' && block.text.includes('could not be processed'))).toBe(false);

    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const error = await agentErrorOf(
      runtime.submitTurn({
        sessionId,
        input: [
          {
            type: 'image',
            mediaType: 'image/png',
            data: noisePng(1320, imageLimits.maxBytes + 1).toString('base64'),
          },
        ],
      }),
    );
    expect(error).toMatchObject({ code: 'invalid_command', details: { reason: 'image_too_large', index: 0 } });
    expect((await runtime.readEvents(sessionId)).map((event) => event.type)).toEqual(['session.opened']);
  });
});
