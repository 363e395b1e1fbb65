import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import type { SessionSnapshot } from '@tether/protocol';
import { openSqliteStore } from '@tether/store-sqlite';
import { fakeClaudeCliPath, fakeCliScript } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-local-', { directories: ['elsewhere'] });

function tether(args: readonly string[], env: Record<string, string> = fixture.environment): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: env }).finished;
}

async function firstSession(): Promise<string> {
  fixture.api.enqueue(textReply('First answer.'));
  const first = await tether(['run', 'Remember KIWI']);
  expect(first.code, first.stderr).toBe(0);
  const match = /session (ses_[0-9a-f]{32})/.exec(first.stderr);
  if (!match) throw new Error(`no session id in: ${first.stderr}`);
  return match[1]!;
}

describe('tether run --resume with --cwd', () => {
  it("accepts the session's own directory (also through a symlink) and refuses another one, changing nothing", async () => {
    const sessionId = await firstSession();
    fixture.api.enqueue(textReply('Same place.'));
    const viaLink = path.join(fixture.root, 'link-to-workspace');
    await symlink(fixture.workspace, viaLink);
    const same = await tether(['run', '--resume', sessionId, '--cwd', viaLink, 'Again']);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe('Same place.\n');

    const turnsBefore = fixture.api.requests.filter((request) => request.kind === 'turn').length;
    const elsewhere = await tether([
      'run',
      '--resume',
      sessionId,
      '--cwd',
      path.join(fixture.root, 'elsewhere'),
      'Move',
    ]);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toContain(`is not the workspace of ${sessionId} (${fixture.workspace})`);
    expect(elsewhere.stderr).toContain('Drop --cwd');
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(turnsBefore);
    const shown = JSON.parse((await tether(['show', sessionId, '--json'])).stdout) as SessionSnapshot;
    expect(shown.usage).toBeDefined();
    expect(shown.lastRun?.outcome).toBe('succeeded');
  });

  it('--model and --permission-mode with --resume change the session from this turn on (a retired model, a mode), not for a turn refused', async () => {
    const sessionId = await firstSession();
    const before = JSON.parse((await tether(['show', sessionId, '--json'])).stdout) as SessionSnapshot;
    const resumeOnTheOtherModel = (mode: string, ...more: string[]) =>
      tether([
        'run',
        '--resume',
        sessionId,
        '--model',
        'claude-other-model',
        '--permission-mode',
        mode,
        ...more,
        'Go on',
      ]);
    const refused = await resumeOnTheOtherModel('auto_edit', '--file', 'missing.txt');
    expect(refused.code, refused.stderr).toBe(2);
    const unchanged = JSON.parse((await tether(['show', sessionId, '--json'])).stdout) as SessionSnapshot;
    expect([unchanged.model, unchanged.permissionMode]).toEqual([before.model, before.permissionMode]);
    expect(unchanged.configuration.model).not.toBe('claude-other-model');

    fixture.api.enqueue(textReply('On the other model.'));
    const resumed = await resumeOnTheOtherModel('plan');
    expect(resumed.code, resumed.stderr).toBe(0);
    const turn = fixture.api.requests.filter((request) => request.kind === 'turn').at(-1)!;
    expect(turn.body).toMatchObject({ model: 'claude-other-model' });
    // The conversation goes on: the first turn is in the request.
    expect(JSON.stringify(turn.body)).toContain('Remember KIWI');
    const shown = JSON.parse((await tether(['show', sessionId, '--json'])).stdout) as SessionSnapshot;
    expect([shown.configuration.model, shown.permissionMode]).toEqual(['claude-other-model', 'plan']);
  });
});

describe('tether sessions and show without a daemon', () => {
  it('read the data dir directly', async () => {
    const sessionId = await firstSession();
    const listed = await tether(['sessions', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const sessions = JSON.parse(listed.stdout) as SessionSnapshot[];
    expect(sessions.map((session) => session.sessionId)).toEqual([sessionId]);
    expect(sessions[0]!.workspace).toEqual({ kind: 'directory', path: fixture.workspace });

    const human = await tether(['sessions']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(sessionId);
    // A session id given to sessions is a mistake for show: said, not ignored.
    const stray = await tether(['sessions', sessionId]);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('tether sessions takes no arguments (for one session: tether show SESSION)');

    const shown = await tether(['show', sessionId, '--json']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ sessionId, state: 'idle', lastRun: { outcome: 'succeeded' } });

    const unknown = await tether(['show', `ses_${'0'.repeat(32)}`]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('[session_not_found]');
  });

  it('on a data dir that does not exist (a typo), say so and make nothing there', async () => {
    const typo = path.join(fixture.root, 'no-such-data-dir');
    const listed = await tether(['sessions', '--data-dir', typo]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toContain('No sessions.');
    expect(listed.stderr).toContain(`there is no data dir at ${typo}`);
    const shown = await tether(['show', `ses_${'0'.repeat(32)}`, '--data-dir', typo]);
    expect(shown.code).toBe(1);
    expect(shown.stderr).toContain('[session_not_found]');
    expect(existsSync(typo)).toBe(false);
  });

  it('say which process holds the data dir when another one does, and what to do, for the commands that need a daemon too', async () => {
    const store = await openSqliteStore({ dataDir: fixture.environment.TETHER_HOME! });
    try {
      const unknown = `ses_${'0'.repeat(32)}`;
      // The commands that need a daemon say why none can start, too.
      for (const args of [['sessions'], ['show', unknown], ['interrupt', unknown], ['send', unknown, 'hi']]) {
        const result = await tether(args);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain('[data_dir_in_use]');
        expect(result.stderr).toContain(`process ${process.pid}`);
        expect(result.stderr).toContain('tether serve');
        expect(result.stderr).not.toContain('Start one with');
      }
    } finally {
      await store.close();
    }
  });
});

describe('tether run and tether acp --agent-nice', () => {
  it('takes a whole number from 0 to 19; anything else is a usage error before anything runs', async () => {
    for (const command of ['run', 'acp']) {
      for (const value of ['20', '-1', '2.5', 'low']) {
        const result = await tether([command, `--agent-nice=${value}`, ...(command === 'run' ? ['hi'] : [])]);
        expect(result.code, `${command} ${value}`).toBe(2);
        expect(result.stderr).toContain(
          `--agent-nice takes a whole number from 0 (agents run as Tether does) to 19, not "${value}"`,
        );
      }
    }
    expect(fixture.api.requests).toHaveLength(0);
  });
});

describe('tether run --startup-timeout', () => {
  it('takes a number of seconds above 0, at most a day (a longer timer would fire at once)', async () => {
    for (const value of ['0', '-3', 'soon', '86401', '3000000']) {
      const result = await tether(['run', `--startup-timeout=${value}`, 'hi']);
      expect(result.code, value).toBe(2);
      expect(result.stderr).toContain('--startup-timeout takes a number of seconds above 0, at most 86400');
    }
    expect(fixture.api.requests).toHaveLength(0);
  });

  it('reaches the provider: an agent that never writes a frame fails the run provider_stalled', async () => {
    const silent = {
      ...fixture.environment,
      TETHER_CLAUDE_PATH: fakeClaudeCliPath(),
      ...fakeCliScript([[{ hang: true }]]),
    };
    const result = await tether(['run', '--json', '--startup-timeout', '0.5', 'Anyone there?'], silent);
    expect(result.code).toBe(1);
    const completed = result.stdout
      .trimEnd()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            type: string;
            outcome?: string;
            error?: { code: string; details?: { phase?: string } };
          },
      )
      .find((event) => event.type === 'run.completed');
    expect(completed).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_stalled', details: { phase: 'startup' } },
    });
  });
});
