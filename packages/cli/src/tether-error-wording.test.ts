import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { diffLimits } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type FinishedTether, sessionIdFrom, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-wording-');

function tether(args: readonly string[], environment: Record<string, string> = fixture.environment) {
  return spawnTether(args, { cwd: fixture.workspace, environment }).finished;
}

/** The API's vocabulary, which a `tether` user cannot type. */
const apiWords = /open_session|close_session|interrupt_run|submit_turn|commandId|\/v1\/|receipt/;

function refusedWith(result: FinishedTether, code: string, exitCode: number): string {
  expect(result.code, result.stderr).toBe(exitCode);
  // The stable code stays on the line, for scripts.
  expect(result.stderr).toContain(`[${code}]`);
  expect(result.stderr).not.toMatch(apiWords);
  return result.stderr;
}

describe("a refusal, in the CLI's words", () => {
  it('names the commands to use, not the API calls behind them', async () => {
    const unknown = refusedWith(await tether(['show', `ses_${'0'.repeat(32)}`]), 'session_not_found', 1);
    expect(unknown).toContain('`tether sessions` lists the sessions');

    fixture.api.enqueue(textReply('Done.'));
    const run = await tether(['run', 'Say done']);
    expect(run.code, run.stderr).toBe(0);
    const sessionId = sessionIdFrom(run.stderr);
    const stillOpen = refusedWith(await tether(['delete', sessionId]), 'session_open', 1);
    expect(stillOpen).toContain(`\`tether close ${sessionId}\``);
  });

  it("refuses a diff's --max-bytes above the one cap, naming it, before reading anything", async () => {
    const sessionId = `ses_${'0'.repeat(32)}`;
    const above = await tether(['diff', sessionId, '--max-bytes', String(diffLimits.maxBytes + 1)]);
    expect(above.code).toBe(2);
    expect(above.stderr).toContain(`from 1 to ${diffLimits.maxBytes} (16 MiB)`);
    // The cap itself is allowed: the command goes on to the session, which is not there.
    refusedWith(await tether(['diff', sessionId, '--max-bytes', String(diffLimits.maxBytes)]), 'session_not_found', 1);
  });
});

describe('tether doctor, credentials', () => {
  type Report = {
    ok: boolean;
    checks: { name: string; ok: boolean; warning?: boolean; detail: string; fix?: string }[];
  };

  async function doctor(environment: Record<string, string>, json = true) {
    const result = await tether(['doctor', ...(json ? ['--json'] : [])], environment);
    return { result, report: json ? (JSON.parse(result.stdout) as Report) : undefined };
  }

  function credentialsOf(report: Report | undefined) {
    return report?.checks.find((check) => check.name === 'credentials');
  }

  function bare(extra: Record<string, string> = {}): Record<string, string> {
    const { ANTHROPIC_API_KEY: _apiKey, ANTHROPIC_BASE_URL: _baseUrl, ...rest } = fixture.environment;
    return { ...rest, ...extra };
  }

  it('fails the row, with what to do, when nothing would authenticate the agent', async () => {
    const { result, report } = await doctor(bare());
    expect(result.code).toBe(1);
    expect(report?.ok).toBe(false);
    const credentials = credentialsOf(report);
    expect(credentials).toMatchObject({ ok: false, fix: expect.stringContaining('ANTHROPIC_API_KEY') });
    expect(credentials?.detail).toContain(`no claude login in ${path.join(fixture.environment.HOME!, '.claude')}`);
    const human = await doctor(bare(), false);
    expect(human.result.stdout).toMatch(/^✗ credentials {2}none found/m);
    expect(human.result.stdout).toContain('fix: Set ANTHROPIC_API_KEY, or run `claude` once');
  });

  it('does not count an OAuth token Tether keeps from the agent', async () => {
    const { result, report } = await doctor(bare({ CLAUDE_CODE_OAUTH_TOKEN: 'token-from-the-shell' }));
    expect(result.code).toBe(1);
    expect(credentialsOf(report)?.detail).toContain('CLAUDE_CODE_OAUTH_TOKEN is set, but Tether does not pass it');
    expect(result.stdout).not.toContain('token-from-the-shell');
  });

  it('says what it looked at when something is there: a variable is only seen to be set, a login file is named', async () => {
    const withKey = credentialsOf((await doctor(fixture.environment)).report);
    expect(withKey).toMatchObject({
      ok: true,
      detail: expect.stringContaining('ANTHROPIC_API_KEY is set (only its presence is checked'),
    });

    const claudeDirectory = path.join(fixture.environment.HOME!, '.claude');
    await mkdir(claudeDirectory, { recursive: true });
    await writeFile(
      path.join(claudeDirectory, '.credentials.json'),
      JSON.stringify({ claudeAiOauth: { accessToken: 'a', refreshToken: 'r', expiresAt: 0 } }),
    );
    const { result, report } = await doctor(bare());
    expect(result.code).toBe(0);
    expect(credentialsOf(report)).toMatchObject({
      ok: true,
      detail: expect.stringContaining(
        `a Claude account login in ${path.join(claudeDirectory, '.credentials.json')} (not checked`,
      ),
    });
  });

  it('warns instead of passing when a custom endpoint may need no key', async () => {
    const { result, report } = await doctor(bare({ ANTHROPIC_BASE_URL: fixture.environment.ANTHROPIC_BASE_URL! }));
    expect(result.code).toBe(0);
    expect(credentialsOf(report)).toMatchObject({ ok: true, warning: true });
    const human = await doctor(bare({ ANTHROPIC_BASE_URL: fixture.environment.ANTHROPIC_BASE_URL! }), false);
    expect(human.result.stdout).toMatch(/^! credentials {2}no ANTHROPIC_API_KEY/m);
  });
});
