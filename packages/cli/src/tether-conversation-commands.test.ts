import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RecordedRequest, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ModelList, ProtocolEvent, SessionSnapshot } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { useTetherServe } from './test-support/serve-tether.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-conversation-');
const redSquare = path.join(path.dirname(fileURLToPath(import.meta.url)), '__fixtures__', 'red-square.png');

const { serve } = useTetherServe(fixture);

function tether(args: readonly string[]): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment }).finished;
}

/** `tether ARGS`, expected to succeed; its stdout as JSON lines. */
async function tetherJson<T>(args: readonly string[]): Promise<T[]> {
  const result = await tether(args);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as T);
}

/** One turn through `tether run --json` (resuming `sessionId` when given): the session and the run. */
async function turn(
  prompt: string,
  reply: string,
  sessionId?: string,
  options: readonly string[] = [],
): Promise<{ sessionId: string; runId: string }> {
  fixture.api.enqueue(textReply(reply));
  const events = await tetherJson<ProtocolEvent>([
    'run',
    '--json',
    ...(sessionId ? ['--resume', sessionId] : options),
    prompt,
  ]);
  const started = events.find((event) => event.type === 'run.started')!;
  expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
  return { sessionId: started.sessionId, runId: (started as { runId: string }).runId };
}

const turnRequests = (): RecordedRequest[] => fixture.api.requests.filter((request) => request.kind === 'turn');
/** Everything the last turn request sent the model as its conversation. */
const lastConversation = () => JSON.stringify((turnRequests().at(-1)!.view!.body as { messages: unknown }).messages);

/**
 * A turn, a second one, a fork at the first, a turn on the fork, then a rewind of the original to
 * before its second turn and a turn after it: each request carries exactly the history it should.
 */
async function forkAndRewindRoundTrip(): Promise<void> {
  const first = await turn('First question KIWI', 'First answer MANGO');
  const second = await turn('Second question PLUM', 'Second answer PEAR', first.sessionId);

  const forked = await tether(['fork', first.sessionId, '--at', first.runId]);
  expect(forked.code, forked.stderr).toBe(0);
  const forkSessionId = forked.stdout.trim();
  expect(forkSessionId).toMatch(/^ses_[0-9a-f]{32}$/);
  expect(forkSessionId).not.toBe(first.sessionId);
  expect(forked.stderr).toContain(`tether run --resume ${forkSessionId}`);

  await turn('Fork question FIG', 'Fork answer', forkSessionId);
  expect(lastConversation()).toContain('First question KIWI');
  expect(lastConversation()).toContain('First answer MANGO');
  expect(lastConversation()).not.toContain('Second question PLUM');
  expect(lastConversation()).not.toContain('Second answer PEAR');
  const fork = (await tetherJson<SessionSnapshot>(['show', forkSessionId, '--json']))[0]!;
  expect(fork.forkedFrom).toEqual({ sessionId: first.sessionId, runId: first.runId });
  // It has its source's title, so the list says which one is the fork.
  const listed = (await tether(['sessions'])).stdout.split('\n');
  expect(listed.find((line) => line.startsWith(forkSessionId))).toContain(`fork of ${first.sessionId}`);
  expect(listed.find((line) => line.startsWith(first.sessionId))).not.toContain('fork of');

  // The original goes on independently: its next turn has its whole history, none of the fork's.
  await turn('Original again LIME', 'Original answer', first.sessionId);
  expect(lastConversation()).toContain('Second question PLUM');
  expect(lastConversation()).not.toContain('Fork question FIG');

  // Closed, it is rewound all the same, and left closed.
  expect(await tetherJson(['close', first.sessionId, '--json'])).toMatchObject([
    { sessionId: first.sessionId, state: 'closed', workspaceStatus: { kind: 'directory', state: 'kept' } },
  ]);
  const [rewound] = await tetherJson<{ toRunId: string; files: unknown }>([
    'rewind',
    first.sessionId,
    '--to',
    second.runId,
    '--json',
  ]);
  expect(rewound).toMatchObject({ type: 'rewind_session', toRunId: second.runId, files: null });
  expect((await tetherJson<SessionSnapshot>(['show', first.sessionId, '--json']))[0]).toMatchObject({
    state: 'closed',
  });
  await turn('After the rewind GUAVA', 'Rewound answer', first.sessionId);
  expect(lastConversation()).toContain('First question KIWI');
  expect(lastConversation()).not.toContain('Second question PLUM');
  expect(lastConversation()).not.toContain('Original again LIME');
}

describe('--help', () => {
  it('fork, rewind, models and run print their usage with the new options, exit 0', async () => {
    const expected = {
      fork: ['tether fork SESSION [--at RUN]', '--json'],
      rewind: ['tether rewind SESSION --to RUN [--files]', '--json'],
      models: ['tether models [--provider NAME] [--transport cli|sdk] [--claude-path PATH] [--json]'],
      run: ['--image PATH', '--file PATH'],
      send: ['--image PATH', '--file PATH'],
    };
    for (const [command, texts] of Object.entries(expected)) {
      const help = await tether([command, '--help']);
      expect(help.code).toBe(0);
      for (const text of texts) expect(help.stdout).toContain(text);
    }
  });

  it('anywhere among the options, --help or -h prints the usage and does nothing else; after -- it is a prompt', async () => {
    for (const args of [
      ['run', '--json', '--help'],
      ['fork', `ses_${'0'.repeat(32)}`, '-h'],
      ['sessions', '--json', '--help'],
    ]) {
      const help = await tether(args);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toContain(`tether ${args[0]}`);
      expect(help.stderr).toBe('');
    }
    // After --, "--help" is the prompt: the options before it are checked as for any run.
    const prompt = await tether(['run', '--transport', 'bogus', '--', '--help']);
    expect(prompt.code).toBe(2);
    expect(prompt.stderr).toBe('tether run: --transport takes cli or sdk, not "bogus".\n');
  });
});

describe('tether models', () => {
  it("prints the agent's list as a table and as JSON, in-process and through a daemon alike", async () => {
    const [local] = await tetherJson<ModelList>(['models', '--json']);
    expect(local!.provider).toBe('claude');
    expect(local!.models.map((model) => model.id)).toContain('default');
    const sdk = (await tetherJson<ModelList>(['models', '--json', '--transport', 'sdk']))[0]!;
    expect(sdk.models.map((model) => model.id)).toEqual(local!.models.map((model) => model.id));
    // --claude-path names the binary to ask, as for tether run.
    const missingBinary = await tether(['models', '--claude-path', path.join(fixture.root, 'no-claude')]);
    expect(missingBinary.code).toBe(1);
    expect(missingBinary.stderr).toContain(path.join(fixture.root, 'no-claude'));

    // An unknown provider is a usage error, in-process as through a daemon (below).
    const unknownHere = await tether(['models', '--provider', 'nope']);
    expect([unknownHere.code, unknownHere.stderr]).toEqual([
      2,
      'tether models: --provider: No provider named "nope" is configured. Available: claude.\n',
    ]);

    const table = await tether(['models']);
    expect(table.code, table.stderr).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+DESCRIPTION$/);
    expect(lines).toHaveLength(local!.models.length + 1);
    for (const [index, model] of local!.models.entries()) {
      expect(lines[index + 1]!.startsWith(model.id)).toBe(true);
      expect(lines[index + 1]).toContain(model.displayName);
    }

    await serve();
    expect((await tetherJson<ModelList>(['models', '--json']))[0]).toEqual(local);
    // The daemon answers with its own agent: a binary or transport asked for here is said to be ignored.
    const daemonsOwn = await tether(['models', '--json', '--claude-path', path.join(fixture.root, 'no-claude')]);
    expect(daemonsOwn.code, daemonsOwn.stderr).toBe(0);
    expect(JSON.parse(daemonsOwn.stdout)).toEqual(local);
    expect(daemonsOwn.stderr).toBe(
      'tether models: --claude-path ignored: the daemon lists the models of the agent it was started with (give them to tether serve, or stop it to ask in this process).\n',
    );
    const unknown = await tether(['models', '--provider', 'nope']);
    expect([unknown.code, unknown.stderr]).toEqual([unknownHere.code, unknownHere.stderr]);
    // No model request: the list is built into the agent.
    expect(turnRequests()).toHaveLength(0);
  });
});

describe('tether run --image and --file', () => {
  it('sends the image (same bytes) and the file reference to the model, and says what the turn carried', async () => {
    const image = await readFile(redSquare);
    await writeFile(path.join(fixture.workspace, 'notes.txt'), 'The secret word is QUINCE.\n');
    fixture.api.enqueue(textReply('A red square, and QUINCE.'));
    const result = await tether(['run', '--image', redSquare, '--file', 'notes.txt', 'What do you see?']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('A red square, and QUINCE.\n');
    expect(result.stderr).toContain(`· with image/png 4×4 ${image.byteLength} B, file notes.txt`);
    const view = turnRequests().at(-1)!.view!;
    expect(view.lastUserBlocks.filter((block) => block.type === 'image')).toEqual([
      { type: 'image', mediaType: 'image/png', data: image.toString('base64') },
    ]);
    expect(view.attachedFiles.map((file) => file.filePath)).toEqual([path.join(fixture.workspace, 'notes.txt')]);
    expect(view.attachedFiles[0]!.content).toContain('QUINCE');
  });

  it('tether send --image through a daemon sends it too', async () => {
    await serve();
    const { sessionId } = await turn('First', 'One');
    fixture.api.enqueue(textReply('Red.'));
    const sent = await tether(['send', sessionId, '--image', redSquare, 'And this?']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(
      turnRequests()
        .at(-1)!
        .view!.lastUserBlocks.filter((block) => block.type === 'image'),
    ).toEqual([{ type: 'image', mediaType: 'image/png', data: (await readFile(redSquare)).toString('base64') }]);

    // Refused as bad input, a turn sent to a closed session leaves it closed, as it was.
    await writeFile(path.join(fixture.workspace, 'fake.png'), 'not an image at all\n');
    await tether(['close', sessionId]);
    const refused = await tether(['send', sessionId, '--image', 'fake.png', 'And this?']);
    expect([refused.code, refused.stderr]).toEqual([2, expect.stringContaining('[invalid_command]')]);
    expect((await tetherJson<SessionSnapshot[]>(['show', sessionId, '--json']))[0]).toMatchObject({ state: 'closed' });
  });

  it('refuses a .png holding text with exit code 2 before anything is recorded: no request, and the session it opened is gone', async () => {
    await writeFile(path.join(fixture.workspace, 'fake.png'), 'not an image at all\n');
    const result = await tether(['run', '--image', 'fake.png', 'What is this?']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('[invalid_command]');
    expect(turnRequests()).toHaveLength(0);
    expect((await tetherJson<SessionSnapshot[]>(['sessions', '--json']))[0]).toEqual([]);
  });
});

describe('tether fork and tether rewind', () => {
  it('round trip in-process (no daemon)', async () => {
    await forkAndRewindRoundTrip();
  });

  it('round trip through a daemon', async () => {
    await serve();
    await forkAndRewindRoundTrip();
  });

  it('rewind --files puts back a file a later turn edited, and lists it', async () => {
    const notes = path.join(fixture.workspace, 'notes.txt');
    fixture.api.enqueue(toolUseReply('Write', { file_path: notes, content: 'version one\n' }));
    const first = await turn('Write version one', 'Wrote one.', undefined, ['--permission-mode', 'auto_edit']);
    fixture.api.enqueue(toolUseReply('Write', { file_path: notes, content: 'version two\n' }));
    const second = await turn('Write version two', 'Wrote two.', first.sessionId);
    expect(await readFile(notes, 'utf8')).toBe('version two\n');

    const rewound = await tether(['rewind', first.sessionId, '--to', second.runId, '--files']);
    expect(rewound.code, rewound.stderr).toBe(0);
    expect(rewound.stdout).toContain(`rewound ${first.sessionId} to just before ${second.runId}`);
    expect(rewound.stdout).toMatch(/restored 1 file \(\+\d+ −\d+\):\n/);
    expect(rewound.stdout).toContain(`  ${notes}\n`);
    expect(await readFile(notes, 'utf8')).toBe('version one\n');
  });

  it('rewind --files lists a restored file whose name has a line break on one line, quoted', async () => {
    const notes = path.join(fixture.workspace, 'notes\nforged.txt');
    fixture.api.enqueue(toolUseReply('Write', { file_path: notes, content: 'version one\n' }));
    const first = await turn('Write version one', 'Wrote one.', undefined, ['--permission-mode', 'auto_edit']);
    fixture.api.enqueue(toolUseReply('Write', { file_path: notes, content: 'version two\n' }));
    const second = await turn('Write version two', 'Wrote two.', first.sessionId);

    const rewound = await tether(['rewind', first.sessionId, '--to', second.runId, '--files']);

    expect(rewound.code, rewound.stderr).toBe(0);
    expect(rewound.stdout).toContain(`restored 1 file`);
    expect(rewound.stdout).toContain(`  ${JSON.stringify(notes)}\n`);
    expect(rewound.stdout.split('\n')).not.toContain('forged.txt');
    expect(await readFile(notes, 'utf8')).toBe('version one\n');
  });

  it('refuse a malformed run id and a run of another session, changing nothing', async () => {
    const first = await turn('Only question', 'Only answer');
    const noRun = await tether(['rewind', first.sessionId]);
    expect(noRun.code).toBe(2);
    expect(noRun.stderr).toContain('--to RUN is required');
    const malformed = await tether(['fork', first.sessionId, '--at', 'run_nope']);
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('is not a Tether run id');
    const other = await turn('Another session', 'Another answer');
    const foreign = await tether(['fork', first.sessionId, '--at', other.runId, '--json']);
    expect(foreign.code).toBe(1);
    // With --json the error is one JSON line on stderr, its code stable.
    expect(JSON.parse(foreign.stderr)).toMatchObject({ error: { code: 'run_not_found', retryable: false } });
    // No fork was made: still just the two sessions.
    const sessions = (await tetherJson<SessionSnapshot[]>(['sessions', '--json']))[0]!;
    expect(sessions.map((session) => session.sessionId).sort()).toEqual([first.sessionId, other.sessionId].sort());
  });
});
