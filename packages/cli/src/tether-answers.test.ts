import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { openSqliteStore } from '@tether/store-sqlite';
import { processesWithEnvironment } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, sessionIdFrom, spawnTether } from './test-support/spawn-tether.js';
import { storedRuns } from './test-support/stored-records.js';

const fixture = useCommandFixture('tether-answers-');

const writeFile = { command: 'echo from-prompt > prompted.txt', description: 'Write a file' };

interface PrintedEvent {
  readonly type: string;
  readonly interactionRef?: string;
  readonly outcome?: string;
}

/** `tether run ARGS` in the workspace; `onEvent` sees each --json line as it comes. */
function run(
  args: readonly string[],
  options: { onEvent?: (event: PrintedEvent, pid: number) => void } = {},
): Promise<FinishedTether> {
  const { child, finished } = spawnTether(['run', ...args], {
    cwd: fixture.workspace,
    environment: fixture.environment,
    onStdoutLine: (line) => options.onEvent?.(JSON.parse(line) as PrintedEvent, child.pid!),
  });
  return finished;
}

function printed(stdout: string): PrintedEvent[] {
  return stdout
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as PrintedEvent);
}

/** A FIFO under the test's root, and a descriptor holding it open for writing (O_RDWR: never waits for a reader). */
function fifoWithWriter(): { fifo: string; writer: number } {
  const fifo = path.join(fixture.root, 'answers.fifo');
  execFileSync('mkfifo', [fifo]);
  return { fifo, writer: openSync(fifo, 'r+') };
}

/** Every live process this test started: each carries its HOME. */
function leftovers(): number[] {
  return processesWithEnvironment('HOME', fixture.environment.HOME!);
}

async function storedSessions(): Promise<{ sessionId: string; state: string }[]> {
  const store = await openSqliteStore({ dataDir: fixture.environment.TETHER_HOME! });
  try {
    return (await store.loadSessions()).map(({ sessionId, state }) => ({ sessionId, state }));
  } finally {
    await store.close();
  }
}

function promptedFile(): string | null {
  const file = path.join(fixture.workspace, 'prompted.txt');
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

describe('tether run --answers: a source that cannot be read', () => {
  it.each([
    ['does not exist', 'missing.jsonl', ': no such file.'],
    ['is a directory', 'workspace', ' is a directory.'],
  ])(
    'one that %s is a usage error (exit 2, one line) before anything is opened or stored',
    async (_what, name, says) => {
      const source = path.join(fixture.root, name);
      const result = await run(['--answers', source, 'hi']);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr.trimEnd().split('\n')).toEqual([
        `tether run: --answers ${source}${says} Give a file or a FIFO (mkfifo) that exists and can be read, or - for stdin.`,
      ]);
      expect(fixture.api.requests).toHaveLength(0);
      expect(leftovers()).toEqual([]);
      expect(await storedSessions()).toEqual([]);
    },
  );

  it('one that fails while it is read is reported and the run is stopped: exit 1, nothing left running', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Written.'));
    // Opens and stats as a readable file, but its first read fails (EIO): a disk failing under a file.
    const result = await run(['--answers', '/proc/self/mem', 'Write it']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('tether: could not read --answers /proc/self/mem (EIO');
    expect(result.stderr).toContain('stopping the run');
    expect(leftovers()).toEqual([]);
    expect(await storedRuns(fixture.environment.TETHER_HOME!, sessionIdFrom(result.stderr))).toEqual([
      { status: 'completed', outcome: 'interrupted' },
    ]);
    expect(promptedFile()).toBeNull();
  });
});

describe('tether run --answers: a source that ends, a file that grows', () => {
  it('stdin at its end (--answers - < /dev/null): the prompt is denied, said on stderr, and the run finishes', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Could not.'));
    const result = await run(['--answers', '-', 'Write it']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      'tether: --answers has ended (nothing more can be read from it): tool prompts and questions will be denied.',
    );
    expect(promptedFile()).toBeNull();
    const turns = fixture.api.requests.filter((request) => request.kind === 'turn');
    expect(turns[1]!.view!.toolResults[0]).toMatchObject({ isError: true });
  });

  it('a FIFO whose writer closes while a prompt waits: that prompt is denied and the run finishes', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Could not.'));
    const { fifo, writer } = fifoWithWriter();
    let closed = false;
    const result = await run(['--json', '--answers', fifo, 'Write it'], {
      onEvent: (event) => {
        if (event.type === 'interaction.requested' && !closed) {
          closed = true;
          closeSync(writer);
        }
      },
    }).finally(() => closed || closeSync(writer));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('tether: --answers has ended');
    expect(printed(result.stdout).find((event) => event.type === 'interaction.settled')).toMatchObject({
      outcome: 'denied',
    });
    expect(promptedFile()).toBeNull();
  });

  it('a regular file is followed as it grows: an answer appended once the prompt is shown is read', async () => {
    fixture.api.enqueue(toolUseReply('Bash', writeFile), textReply('Written.'));
    const answers = path.join(fixture.root, 'answers.jsonl');
    writeFileSync(answers, '');
    const result = await run(['--json', '--answers', answers, 'Write it'], {
      onEvent: (event) => {
        if (event.type === 'interaction.requested')
          appendFileSync(
            answers,
            `${JSON.stringify({ ref: event.interactionRef, answer: { decision: 'approve' } })}\n`,
          );
      },
    });
    expect(result.code, result.stderr).toBe(0);
    expect(printed(result.stdout).find((event) => event.type === 'interaction.settled')).toMatchObject({
      outcome: 'approved',
    });
    expect(promptedFile()).toBe('from-prompt\n');
  });
});

describe('tether run --answers FIFO: the FIFO does not hold tether once the run is over', () => {
  it('the run ends: tether exits while the writer still holds the FIFO open', async () => {
    fixture.api.enqueue(textReply('No prompt needed.'));
    const { fifo, writer } = fifoWithWriter();
    try {
      const result = await run(['--answers', fifo, 'Just answer']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toBe('No prompt needed.\n');
      expect(leftovers()).toEqual([]);
    } finally {
      closeSync(writer);
    }
  });

  it('Ctrl-C mid-turn: tether exits 130 while the writer still holds the FIFO open, nothing left running', async () => {
    fixture.api.enqueue(textReply('once upon a time '.repeat(200), { chunks: 200, delayMs: 50 }));
    const { fifo, writer } = fifoWithWriter();
    let signalled = false;
    try {
      const result = await run(['--json', '--answers', fifo, 'Tell me a long story'], {
        onEvent: (event, pid) => {
          if (event.type === 'run.message_delta' && !signalled) {
            signalled = true;
            process.kill(pid, 'SIGINT');
          }
        },
      });
      expect(result.code, result.stderr).toBe(130);
      expect(printed(result.stdout).at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
      expect(leftovers()).toEqual([]);
    } finally {
      closeSync(writer);
    }
  });
});
