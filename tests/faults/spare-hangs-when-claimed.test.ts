import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { pollFor, readProcessCommandLine, readProcessStatus } from '@tether/provider-claude/test-support';
import { answerText, processesWithEnvironment, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from '../conformance/conformance-harness.js';

// A warm spare that was ready (parked, initialize answered) and then hangs does not hold up the
// session that claims it: a claim it makes no progress on is refused, the spare is killed and the
// turn starts cold and succeeds, well before the claim's own 30 s bound (what is checked is the
// refusal's reason, the processes and their end: no clock).

/**
 * Runs claude as its child with stdout passed through. Once claude answered its first control request
 * (initialize) and that answer was handed on, the spare is ready: the watcher then stops claude and
 * itself (SIGSTOP), alive and answering nothing from then on, and writes `readyFile` first. Stopped
 * by itself, the spare hangs before any claim can reach claude, however soon a session claims it.
 * Tether supervises this process (its pid, its group, its marker, which claude inherits).
 */
const readinessWatcher = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
const [readyFile, claude, ...args] = process.argv.slice(2);
const child = spawn(claude, args, { stdio: ['inherit', 'pipe', 'inherit'] });
let seen = '';
child.stdout.on('data', (chunk) => {
  if (seen === null) return void process.stdout.write(chunk);
  seen += chunk.toString('utf8');
  if (!seen.includes('"control_response"')) return void process.stdout.write(chunk);
  seen = null;
  // Once the answer is Tether's to read: stopped from then on, the spare has still answered.
  process.stdout.write(chunk, () => {
    writeFileSync(readyFile, '');
    process.kill(child.pid, 'SIGSTOP');
    process.kill(process.pid, 'SIGSTOP');
  });
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`;

describeTransports('a warm spare that hangs once ready', ({ start }) => {
  it('the claim is refused (spare_not_responding), the spare is killed, and the turn starts cold and succeeds', async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Cold after all.'));
    const watcher = path.join(environment.home, 'readiness-watcher.mjs');
    const ready = path.join(environment.home, 'spare-ready');
    writeFileSync(watcher, readinessWatcher);
    // Parked spares (--await-claim) run under the watcher; every other start is claude itself.
    const wrapper = path.join(environment.home, 'watched-spare-claude.sh');
    writeFileSync(
      wrapper,
      `#!/bin/sh\ncase " $* " in *" --await-claim "*) exec "${process.execPath}" "${watcher}" "${ready}" "${environment.claudePath}" "$@";; esac\nexec "${environment.claudePath}" "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    const runtime = await environment.runtime({ provider: { claudePath: wrapper, warmPool: { spares: 1 } } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    // Ready: it answered initialize. Then it hangs: the spare and its claude stopped themselves, alive, answering nothing.
    await pollFor(() => (existsSync(ready) ? ready : undefined));
    const spare = await pollFor(() =>
      processesWithEnvironment('HOME', environment.home).find((pid) => readProcessCommandLine(pid)?.includes(watcher)),
    );
    await pollFor(() => (readProcessStatus(spare)?.state === 'T' ? true : undefined));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(answerText(events)).toBe('Cold after all.');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const all = await runtime.readEvents(sessionId);
    // The spare was taken (it was ready), then let go for a process of the session's own.
    const started = all.flatMap((event) => (event.type === 'session.process_started' ? [event.pid] : []));
    expect(started).toHaveLength(2);
    expect(started[0]).toBe(spare);
    expect(all).toContainEqual(expect.objectContaining({ type: 'session.process_stopped', reason: 'released' }));
    // Visibly, and for this reason: the 30 s bound would have said control_timeout.
    expect(all).toContainEqual(
      expect.objectContaining({ type: 'diagnostic', code: 'claude.spare_claim_refused.spare_not_responding' }),
    );
    // Killed, not left stopped: its process is gone before the session ends.
    expect(readProcessStatus(spare)).toBeUndefined();
    await runtime.shutdown({ force: true });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
