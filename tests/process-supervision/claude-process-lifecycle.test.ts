import { randomBytes } from 'node:crypto';
import { processesWithEnvironment } from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ClaudeProcess,
  type ProcessExit,
  pollUntil,
  readProcessEnvironment,
  readProcessStatus,
  StdoutChannel,
} from '@tether/provider-claude/test-support';

/**
 * ClaudeProcess's supervision with /bin/sh standing in for claude: each path by which a child can
 * end (on its own, EOF, SIGTERM, SIGKILL, killed from outside) leaves nothing of it behind, with
 * stdout a pipe and a channel of ours (the cli transport's).
 * Every process here carries TETHER_TEST_TAG, which survives `env -u TETHER_PROCESS_MARKER`.
 */

let tag = '';
const processes: ClaudeProcess[] = [];
/** The stdout channel the next start gives its child (none: a pipe). */
let nextChannel: StdoutChannel | undefined;

afterEach(async () => {
  nextChannel?.close();
  nextChannel = undefined;
  for (const pid of processesWithEnvironment('TETHER_TEST_TAG', tag)) process.kill(pid, 'SIGKILL');
  await Promise.all(processes.splice(0).map((child) => child.stop({ busy: true })));
});

function start(script: string): { child: ClaudeProcess; exits: ProcessExit[]; lines: unknown[] } {
  tag = randomBytes(8).toString('hex');
  const exits: ProcessExit[] = [];
  const lines: unknown[] = [];
  const stdoutChannel = nextChannel;
  nextChannel = undefined;
  const child = new ClaudeProcess({
    binaryPath: '/bin/sh',
    argv: ['-c', script],
    environment: { PATH: process.env.PATH ?? '/usr/bin:/bin', TETHER_TEST_TAG: tag },
    cwd: process.cwd(),
    ...(stdoutChannel ? { stdoutChannel } : {}),
    onLine: (line) => lines.push(line),
    onExit: (exit) => exits.push(exit),
  });
  processes.push(child);
  return { child, exits, lines };
}

function tagged(): number[] {
  return processesWithEnvironment('TETHER_TEST_TAG', tag);
}

async function waitForTagged(count: number): Promise<void> {
  expect(await pollUntil(() => tagged().length >= count, { timeoutMs: 10_000 })).toBe(true);
}

describe.runIf(process.platform === 'linux').each(['pipe', 'channel'])(
  'ClaudeProcess supervision (stdout: %s)',
  (stdout) => {
    beforeEach(async () => {
      if (stdout === 'channel') nextChannel = await StdoutChannel.open();
    });

    it('gives the child a fresh marker, its own process group and a start time', () => {
      const { child } = start('exec sleep 300');
      const other = start('exec sleep 300').child;
      expect(child.marker).toMatch(/^[0-9a-f]{32}$/);
      expect(other.marker).not.toBe(child.marker);
      expect(child.processGroup).toBe(child.pid);
      expect(child.startTime).toBe(readProcessStatus(child.pid!)!.startTime);
      expect(readProcessEnvironment(child.pid!)).toContain(`TETHER_PROCESS_MARKER=${child.marker}`);
    });

    it('sweeps what a child left when it exits on its own', async () => {
      const { child, exits, lines } = start(
        'nohup sleep 300 >/dev/null 2>&1 & setsid sleep 300 >/dev/null 2>&1 & echo \'{"type":"ok"}\'; exit 0',
      );
      const result = await child.swept;
      expect(result.signalled).toHaveLength(2);
      await child.exited;
      expect(exits).toEqual([{ kind: 'exited', exitCode: 0, signal: null, stderrTail: '' }]);
      expect(lines).toEqual([{ kind: 'json', value: { type: 'ok' } }]);
      expect(tagged()).toEqual([]);
    });

    it('sweeps after an EOF stop', async () => {
      // Reads stdin until EOF, like an idle claude.
      const { child } = start('setsid sleep 300 >/dev/null 2>&1 & cat >/dev/null');
      await waitForTagged(2);
      await child.stop({ busy: false });
      expect(tagged()).toEqual([]);
    });

    it('a forced stop SIGKILLs the idle child at once and sweeps', async () => {
      const { child, exits } = start('setsid sleep 300 >/dev/null 2>&1 & cat >/dev/null');
      await waitForTagged(2);
      await child.stop({ busy: false, force: true });
      expect(exits[0]).toMatchObject({ kind: 'exited', signal: 'SIGKILL' });
      expect(tagged()).toEqual([]);
    });

    it.each([
      { busy: true, path: 'a busy stop' },
      { busy: false, path: 'an idle stop whose child ignores the EOF, after the grace' },
    ])('sweeps after a SIGTERM stop: $path', async ({ busy }) => {
      // sleep never reads stdin: the EOF alone does not end it.
      const { child, exits } = start('setsid sleep 300 >/dev/null 2>&1 & exec sleep 300');
      await waitForTagged(2);
      await child.stop({ busy });
      expect(exits[0]).toMatchObject({ kind: 'exited', signal: 'SIGTERM' });
      expect(tagged()).toEqual([]);
    });

    it('sweeps after a SIGKILL stop of a child that ignores SIGTERM', async () => {
      const { child, exits } = start('setsid sleep 300 >/dev/null 2>&1 & trap "" TERM; exec sleep 300');
      expect(
        await pollUntil(() => readProcessStatus(child.pid!)?.command === 'sleep' && tagged().length === 2, {
          timeoutMs: 10_000,
        }),
      ).toBe(true);
      await child.stop({ busy: true });
      expect(exits[0]).toMatchObject({ kind: 'exited', signal: 'SIGKILL' });
      expect(tagged()).toEqual([]);
    });

    it('sweeps when the child is killed from outside, without any stop', async () => {
      const { child, exits } = start('setsid sleep 300 >/dev/null 2>&1 & exec sleep 300');
      await waitForTagged(2);
      process.kill(child.pid!, 'SIGKILL');
      await child.exited;
      await child.swept;
      expect(exits[0]).toMatchObject({ kind: 'exited', signal: 'SIGKILL' });
      expect(tagged()).toEqual([]);
    });

    it('reports the exit even when a descendant without the marker holds stdout open', async () => {
      // The sleep inherits stdout and drops the marker, so neither the sweep nor 'close' ends it.
      // The shell exits only once the sleep runs: until its exec it still carried the marker.
      const { child, exits } = start(
        'env -u TETHER_PROCESS_MARKER sleep 300 & until [ "$(cat /proc/$!/comm)" = sleep ]; do sleep 0.01; done; exit 3',
      );
      await child.exited;
      expect(exits).toEqual([{ kind: 'exited', exitCode: 3, signal: null, stderrTail: '' }]);
      expect(tagged()).toHaveLength(1);
    });

    it('reports a spawn failure and settles the sweep at once', async () => {
      const exits: ProcessExit[] = [];
      const child = new ClaudeProcess({
        binaryPath: '/nonexistent/claude',
        argv: [],
        environment: {},
        cwd: process.cwd(),
        onLine: () => {},
        onExit: (exit) => exits.push(exit),
      });
      await child.stop({ busy: false });
      expect(exits).toEqual([{ kind: 'spawn_failed', errorCode: 'ENOENT' }]);
      expect(await child.swept).toEqual({ supported: true, signalled: [], survivors: [] });
      expect(child.startTime).toBeUndefined();
      expect(child.processGroup).toBeUndefined();
    });
  },
);
