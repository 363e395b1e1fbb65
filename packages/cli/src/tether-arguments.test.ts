import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-arguments-');

function tether(args: string[]): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: fixture.environment }).finished;
}

const session = `ses_${'a'.repeat(32)}`;

describe('tether arguments', () => {
  it.each([
    [['attach'], 'Give one session id (ses_…).'],
    [['attach', session, 'extra'], 'Give one session id (ses_…).'],
    [['attach', session, '--approve', 'yes'], '--approve takes ask, allow-once or deny, not "yes".'],
    [['interrupt'], 'Give one session id (ses_…).'],
    [['interrupt', 'not-a-session'], '"not-a-session" is not a Tether session id'],
    [['cancel-input', session], 'Give a session id (ses_…) and an input id (inp_…).'],
    [['cancel-input', session, `inp_${'b'.repeat(32)}`, 'extra'], 'Give a session id (ses_…) and an input id (inp_…).'],
    [['cancel-input', session, 'inp_x'], '"inp_x" is not an input id (inp_ and 32 hex digits)'],
  ])('tether %j: the mistake is told (exit 2) whether or not a daemon runs', async (args, message) => {
    const result = await tether(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('No Tether daemon is running');
  });

  it.each(['valueOf', 'constructor', 'frobnicate'])(
    'tether %s: an unknown command is named, with the commands (exit 2)',
    async (name) => {
      const result = await tether([name]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(
        new RegExp(`^tether: unknown command "${name}"\\. Commands: .*\\(tether --help\\)\\.\n$`),
      );
    },
  );

  it('tether help with no such command says so (exit 2), not the general help', async () => {
    const result = await tether(['help', 'bogus']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^tether help: no command "bogus"\. Commands: .*\(tether --help\)\.\n$/);
  });

  it("tether help COMMAND prints that command's usage, and -v the version, exit 0", async () => {
    const help = await tether(['help', 'run']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: tether run /);
    const version = await tether(['-v']);
    expect([version.code, version.stdout.trim()]).toEqual([0, (await tether(['--version'])).stdout.trim()]);
  });

  it('tether models takes no arguments', async () => {
    const result = await tether(['models', 'opus']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('tether models takes no arguments');
    expect(result.stdout).toBe('');
  });

  it('an unknown option is named with where the options are listed, in one clear sentence', async () => {
    const result = await tether(['run', '--verbose', 'hi']);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe(
      `tether run: unknown option --verbose (tether run --help lists them; a prompt that starts with '-' goes after --: tether run -- "-…").`,
    );
    const short = await tether(['sessions', '-x']);
    expect(short.stderr.split('\n')[0]).toBe('tether sessions: unknown option -x (tether sessions --help lists them).');
    expect(fixture.api.requests).toHaveLength(0);
  });

  it('with --json, a usage error is one JSON line on stderr (invalid_command), exit 2', async () => {
    const result = await tether(['sessions', '--json', '--state', 'sleepy']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(JSON.parse(result.stderr)).toEqual({
      error: {
        code: 'invalid_command',
        message: '--state takes idle, running, waiting, closed.',
        retryable: false,
        details: { reason: 'usage' },
      },
    });
  });

  it("an option's value that is missing, or starts with '-', is told in Tether's words (exit 2)", async () => {
    const negative = await tether(['run', '--startup-timeout', '-1', 'hi']);
    expect(negative.code).toBe(2);
    expect(negative.stderr.split('\n')[0]).toBe(
      "tether run: --startup-timeout takes a value, and what follows it starts with '-': a value that does is written --startup-timeout=VALUE (tether run --help says what it takes).",
    );
    const missing = await tether(['run', 'hi', '--model']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.split('\n')[0]).toBe(
      'tether run: --model takes a value, and none was given (tether run --help says what it takes).',
    );
    const valued = await tether(['sessions', '--json=1']);
    expect(valued.code).toBe(2);
    expect(valued.stderr.split('\n')[0]).toBe(
      'tether sessions: --json takes no value: give it alone, without =… (tether sessions --help says what it takes).',
    );
    expect(fixture.api.requests).toHaveLength(0);
  });

  it.each([
    [['run', '--cwd', '', 'hi'], 'tether run: --cwd'],
    [['run', '--image=', 'hi'], 'tether run: --image'],
    [['sessions', '--data-dir', ''], 'tether sessions: --data-dir'],
    [['serve', '--worktree-root='], 'tether serve: --worktree-root'],
  ])('tether %j: an empty value is refused (exit 2), not read as the default', async (args, start) => {
    const result = await tether(args);
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(
      new RegExp(
        `^${start} was given an empty value \\(a shell variable that is not set\\?\\): give it a value, or leave it out`,
      ),
    );
    expect(result.stdout).toBe('');
    expect(fixture.api.requests).toHaveLength(0);
  });

  it('a path given with a ~ the shell left (quoted, or after =) is in the home directory', async () => {
    const result = await tether(['run', '--json', '--cwd=~/no-such-folder', 'hi']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      `The workspace directory ${fixture.environment.HOME}/no-such-folder does not exist`,
    );
    expect(fixture.api.requests).toHaveLength(0);
  });
});
