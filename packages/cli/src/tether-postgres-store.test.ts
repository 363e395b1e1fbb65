import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { type TestPostgres, startTestPostgres } from '@tether/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCommandFixture } from './test-support/command-fixture.js';
import { type ServedTether, stopTether, useTetherDaemons } from './test-support/serve-tether.js';
import { type FinishedTether, sessionIdFrom, spawnTether } from './test-support/spawn-tether.js';

const fixture = useCommandFixture('tether-postgres-');

let postgres: TestPostgres;
beforeAll(async () => {
  postgres = await startTestPostgres();
});
afterAll(async () => {
  await postgres?.stop();
});

function tether(args: readonly string[], extra: Record<string, string> = {}): Promise<FinishedTether> {
  return spawnTether(args, { cwd: fixture.workspace, environment: { ...fixture.environment, ...extra } }).finished;
}

/** A data dir of its own under the test's root (the fixture's default is <root>/data). */
function dataDir(name: string): Record<string, string> {
  return { TETHER_HOME: path.join(fixture.root, name) };
}

function passwordOf(url: string): string {
  const password = new URL(url).password;
  // A test that looks for an empty string in the output could not fail.
  expect(password.length).toBeGreaterThan(8);
  return password;
}

const daemons = useTetherDaemons(fixture);

/** `tether serve --port 0 --no-web ARGS` on the fixture's environment plus `extra`, once it listens. */
function serve(args: readonly string[], extra: Record<string, string>): Promise<ServedTether> {
  return daemons.start(args, { ...fixture.environment, ...extra });
}

/** POST /v1/commands to a daemon with the token of its data dir. */
function postCommand(url: string, directory: string, command: object): Promise<Response> {
  const token = readFileSync(path.join(fixture.root, directory, 'daemon-token'), 'utf8').trim();
  return fetch(`${url}/v1/commands`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(command),
  });
}

describe('tether on a PostgreSQL store', () => {
  it('serve --store runs a turn; a second daemon on the same database starts beside it, refuses its session naming it, then lists it', async () => {
    const database = await postgres.createDatabase();
    const password = passwordOf(database);
    const first = await serve(['--store', database], dataDir('first'));
    expect(first.output()).toContain(
      `sessions: postgres://tether@${new URL(database).host}${new URL(database).pathname}`,
    );

    fixture.api.enqueue(textReply('Stored in PostgreSQL.'));
    // The daemon owns the first data dir: run goes through it.
    const run = await tether(['run', 'Hello'], dataDir('first'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('Stored in PostgreSQL.\n');
    const sessionId = sessionIdFrom(run.stderr);
    // The data dir keeps the token, daemon.json, the lock and the owner id; the sessions are not in it.
    expect(existsSync(path.join(fixture.root, 'first', 'daemon-token'))).toBe(true);
    expect(existsSync(path.join(fixture.root, 'first', 'store-owner-id'))).toBe(true);
    expect(existsSync(path.join(fixture.root, 'first', 'tether.db'))).toBe(false);

    // Still one daemon per data dir, whatever the store.
    const again = await tether(['serve', '--port', '0', '--no-web', '--store', database], dataDir('first'));
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('[data_dir_in_use]');
    expect(again.stderr).not.toContain(password);

    // A second daemon on its own data dir starts on the same database (given the URL by the environment).
    const second = await serve([], { ...dataDir('second'), TETHER_STORE_URL: database });
    // A command for the first daemon's session, sent to the second, is refused naming the first.
    const refused = await tether(['send', sessionId, 'More'], dataDir('second'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('[session_owned_elsewhere]');
    expect(refused.stderr).toContain(`--server ${first.url}`);
    const commandId = 'cmd-sent-to-the-wrong-daemon';
    const submit = {
      type: 'submit_turn',
      commandId,
      sessionId,
      input: [{ type: 'text', text: 'More, at the owner' }],
    };
    const refusal = await postCommand(second.url, 'second', submit);
    expect(refusal.status).toBe(409);
    const refusalBody = (await refusal.json()) as { error: { code: string; details?: { ownerUrl?: string } } };
    expect(refusalBody.error.code).toBe('session_owned_elsewhere');
    expect(refusalBody.error.details?.ownerUrl).toBe(first.url);
    // The refused command left no receipt: the same commandId runs at the owner.
    fixture.api.enqueue(textReply('Carried out by the owner.'));
    const accepted = await postCommand(first.url, 'first', submit);
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    await fixture.api.waitForRequests(2, { kind: 'turn' });

    // A clean stop gives the session up: the second daemon then drives it and lists it.
    await stopTether(first.child, 'SIGTERM');
    const listed = await tether(['sessions', '--json'], dataDir('second'));
    expect(listed.code, listed.stderr).toBe(0);
    const sessions = JSON.parse(listed.stdout) as { sessionId: string; lastRun?: { outcome?: string } }[];
    expect(sessions.map((session) => session.sessionId)).toEqual([sessionId]);
    const shown = JSON.parse((await tether(['show', sessionId, '--json'], dataDir('second'))).stdout) as {
      lastRun?: { outcome?: string };
    };
    expect(shown.lastRun?.outcome).toBe('succeeded');

    for (const output of [first.output(), second.output(), run.stdout, run.stderr, refused.stderr, listed.stderr])
      expect(output).not.toContain(password);
  });

  it('serve, stopped while its PostgreSQL server hangs, stops anyway 30 s past its grace: exit 1, saying why', async () => {
    const database = await postgres.createDatabase();
    const served = await serve(['--store', database, '--shutdown-grace', '0', '--lease-ttl', '3'], dataDir('hung'));
    let exit: number | null = null;
    await postgres.hang({
      whileHung: async () => {
        // Its heartbeat's renewal now waits on a connection that will not answer: /health says so.
        await expect
          .poll(async () => (await fetch(`${served.url}/health`)).status, { timeout: 20_000, interval: 200 })
          .toBe(503);
        const closed = new Promise<number | null>((resolve) => served.child.once('close', resolve));
        served.child.kill('SIGTERM');
        exit = await closed;
      },
    });
    expect(exit).toBe(1);
    expect(served.output()).toContain(
      '■ the daemon has not stopped 30 s after the signal (is its store answering?): stopping now',
    );
  }, 90_000);

  it('run --store runs a turn in-process, and sessions with TETHER_STORE_URL on another data dir shows it', async () => {
    const database = await postgres.createDatabase();
    const password = passwordOf(database);
    fixture.api.enqueue(textReply('In-process, in PostgreSQL.'));
    // The flag wins over a variable that names something else.
    const run = await tether(['run', '--store', database, 'Hello'], {
      ...dataDir('one'),
      TETHER_STORE_URL: 'mysql://nobody@nowhere/none',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('In-process, in PostgreSQL.\n');
    const sessionId = sessionIdFrom(run.stderr);
    expect(existsSync(path.join(fixture.root, 'one', 'tether.db'))).toBe(false);

    const listed = await tether(['sessions', '--json'], { ...dataDir('two'), TETHER_STORE_URL: database });
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { sessionId: string }[]).map((session) => session.sessionId)).toEqual([
      sessionId,
    ]);
    // Without the store, a data dir used with PostgreSQL is not shown as an empty SQLite store of its own.
    const local = await tether(['sessions', '--json'], dataDir('two'));
    expect(local.code).toBe(2);
    expect(local.stderr).toContain('keeps its sessions in PostgreSQL');
    expect(local.stderr).toContain('Pass --store URL (or set TETHER_STORE_URL)');
    expect(existsSync(path.join(fixture.root, 'two', 'tether.db'))).toBe(false);
    for (const output of [run.stdout, run.stderr, listed.stdout, listed.stderr]) expect(output).not.toContain(password);
  });

  it("keeps TETHER_STORE_URL from the agent's processes", async () => {
    const database = await postgres.createDatabase();
    const password = passwordOf(database);
    fixture.api.enqueue(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, for the agent's shell to make
      toolUseReply('Bash', { command: 'echo "store=[${TETHER_STORE_URL:-none}]"', description: 'Show it' }),
      textReply('Nothing to see.'),
    );
    const run = await tether(['run', '--approve', 'allow-once', 'Show the store'], {
      ...dataDir('agent'),
      TETHER_STORE_URL: database,
    });
    expect(run.code, run.stderr).toBe(0);
    const toolResult = fixture.api.requests.filter((request) => request.kind === 'turn')[1]!.view!.toolResults[0]!;
    expect(JSON.stringify(toolResult.content)).toContain('store=[none]');
    expect(`${run.stdout}${run.stderr}`).not.toContain(password);
  });

  it('a wrong password fails serve and run at start with store_failure (exit 1), the password in no output', async () => {
    const url = new URL(await postgres.createDatabase());
    url.password = 'wrong-SECRET-4d1c9e';
    const wrong = url.toString();
    for (const args of [
      ['serve', '--port', '0', '--no-web', '--store', wrong],
      ['run', '--store', wrong, 'Hello'],
      ['sessions', '--store', wrong],
    ]) {
      const result = await tether(args, dataDir('refused'));
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('[store_failure]');
      expect(result.stderr).toContain(`127.0.0.1:${url.port}`);
      expect(`${result.stdout}${result.stderr}`).not.toContain('wrong-SECRET');
    }
    // Nothing reached the model, no daemon was announced, and the data dir's lock was given back.
    expect(fixture.api.requests.filter((request) => request.kind === 'turn')).toHaveLength(0);
    expect(existsSync(path.join(fixture.root, 'refused', 'daemon.json'))).toBe(false);
    expect(existsSync(path.join(fixture.root, 'refused', 'tether.lock'))).toBe(false);
    // Nor is the data dir marked as keeping its sessions in PostgreSQL: without --store it is the SQLite one it was.
    expect(existsSync(path.join(fixture.root, 'refused', 'store-owner-id'))).toBe(false);
    // Nor is the data dir each made left behind, empty.
    expect(existsSync(path.join(fixture.root, 'refused'))).toBe(false);
    expect((await tether(['sessions', '--json'], dataDir('refused'))).stdout).toBe('[]\n');
  });

  it('doctor checks the PostgreSQL store without touching it, and a data dir whose sessions are there opened without it', async () => {
    const url = await postgres.createDatabase();
    const row = (result: FinishedTether) =>
      (JSON.parse(result.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find(
        (check) => check.name === 'store',
      );
    // A database no Tether has opened: doctor says so, and leaves it so (no table made).
    const fresh = await tether(['doctor', '--json', '--store', url], dataDir('doctor'));
    expect(row(fresh)).toMatchObject({ ok: true, detail: expect.stringContaining('no Tether has used it yet') });
    expect(existsSync(path.join(fixture.root, 'doctor'))).toBe(false);
    expect((await tether(['doctor', '--json', '--store', url], dataDir('doctor'))).stdout).toContain(
      'no Tether has used it yet',
    );
    // Once a command used it (through TETHER_STORE_URL here), its schema's version.
    const listed = await tether(['sessions', '--json'], { ...dataDir('doctor'), TETHER_STORE_URL: url });
    expect(listed.code, listed.stderr).toBe(0);
    const used = await tether(['doctor', '--json'], { ...dataDir('doctor'), TETHER_STORE_URL: url });
    expect(row(used)).toMatchObject({
      ok: true,
      detail: expect.stringMatching(/^PostgreSQL at .*: schema version \d+$/),
    });
    // A wrong password: a failed row and exit 1, the password nowhere.
    const wrong = new URL(url);
    wrong.password = 'wrong-SECRET-5e2d0f';
    const refused = await tether(['doctor', '--store', wrong.toString()], dataDir('doctor'));
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/✗ store +The store could not read the database/);
    expect(`${refused.stdout}${refused.stderr}`).not.toContain('wrong-SECRET');
    // A variable set to what is no store URL: a failed row among the others, not a usage error instead of them.
    const malformed = await tether(['doctor', '--json'], { ...dataDir('doctor'), TETHER_STORE_URL: 'mysql://h/db' });
    expect(malformed.code).toBe(1);
    expect(row(malformed)).toMatchObject({ ok: false, detail: expect.stringContaining('TETHER_STORE_URL takes') });
    // The data dir keeps its sessions in PostgreSQL: without the store, doctor says what the others would refuse.
    const without = await tether(['doctor', '--json'], dataDir('doctor'));
    expect(without.code).toBe(1);
    expect(row(without)).toMatchObject({
      ok: false,
      detail: expect.stringContaining('keeps its sessions in PostgreSQL'),
    });
  });

  it('serve restarted at once after a crash says it watches its predecessor before starting', async () => {
    const url = await postgres.createDatabase();
    const args = ['--store', url, '--lease-ttl', '3'];
    const crashed = await serve(args, dataDir('restarted'));
    await stopTether(crashed.child, 'SIGKILL');
    const next = await serve(args, dataDir('restarted'));
    expect(next.output()).toMatch(
      /tether serve: this data dir's last process on the store renewed its heartbeat moments ago \(a crash or a restart\?\): watching it for up to \d+ s before starting/,
    );
    expect(next.output()).not.toContain(new URL(url).password);
  });

  it('a short password that is also a word of the message (or of the address) garbles nothing, and shows nowhere as the password', async () => {
    for (const password of ['store', 'the', '127']) {
      const result = await tether(
        ['sessions', '--store', `postgres://tether:${password}@127.0.0.1:1/tether`],
        dataDir('short'),
      );
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain('[store_failure]');
      expect(result.stderr).toContain('127.0.0.1:1');
      expect(result.stderr).not.toContain('***');
      // Nor printed where a URL would spell it (a message that took the URL in without scrubbing).
      expect(result.stderr).not.toContain(`:${password}@`);
    }
  });

  it('refuses a store URL that is not PostgreSQL as a usage error naming the accepted forms, and --help shows no password', async () => {
    for (const [args, extra] of [
      [['serve', '--store', 'sqlite://u:wrong-SECRET@h/x'], {}],
      [['run', 'Hello'], { TETHER_STORE_URL: 'mysql://u:wrong-SECRET@h/x' }],
      [['acp', '--store', 'wrong-SECRET'], {}],
    ] as const) {
      const result = await tether(args, extra);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('postgres://USER:PASSWORD@HOST:PORT/DATABASE or postgresql://');
      expect(result.stderr).not.toContain('wrong-SECRET');
    }
    const help = await tether(['serve', '--help'], { TETHER_STORE_URL: 'postgres://u:wrong-SECRET@h/x' });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--store URL');
    expect(`${help.stdout}${help.stderr}`).not.toContain('wrong-SECRET');
  });
});
