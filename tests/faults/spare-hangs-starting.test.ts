import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { pollFor, readProcessCommandLine, readProcessStatus } from '@tether/provider-claude/test-support';
import { answerText, processesWithEnvironment, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports } from '../conformance/conformance-harness.js';

// A warm spare that hangs while it starts (it never answers initialize) does not hold up the
// session that would have taken it: past a short wait the turn starts cold and succeeds, well
// before the spare's own 30 s start-up bound (that order is what is checked: no clock).

describeTransports('a warm spare that hangs while starting', ({ start }) => {
  it("a session's first turn does not wait for it: it starts cold and succeeds; the spare is left to its bound", async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Cold and quick.'));
    // Every parked spare (--await-claim) stops itself before claude starts: alive, answering nothing.
    const hanging = path.join(environment.home, 'hanging-spare-claude.sh');
    writeFileSync(
      hanging,
      `#!/bin/sh\ncase " $* " in *" --await-claim "*) kill -STOP $$;; esac\nexec "${environment.claudePath}" "$@"\n`,
    );
    chmodSync(hanging, 0o755);
    const runtime = await environment.runtime({ provider: { claudePath: hanging, warmPool: { spares: 1 } } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const spare = await pollFor(() =>
      processesWithEnvironment('HOME', environment.home).find(
        (pid) => readProcessCommandLine(pid)?.includes('--await-claim') && readProcessStatus(pid)?.state === 'T',
      ),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hello.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(answerText(events)).toBe('Cold and quick.');
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const started = (await runtime.readEvents(sessionId)).flatMap((event) =>
      event.type === 'session.process_started' ? [event.pid] : [],
    );
    expect(started).toHaveLength(1);
    expect(started).not.toContain(spare);
    // Visibly: a diagnostic says the spare was passed over.
    expect(await runtime.readEvents(sessionId)).toContainEqual(
      expect.objectContaining({ type: 'diagnostic', code: 'claude.spare_not_ready' }),
    );
    // The turn did not wait out the spare's start-up bound (30 s, then it is killed): skipped, not
    // adopted nor killed, the spare still hangs when the turn has ended.
    expect(readProcessStatus(spare)?.state).toBe('T');
    await runtime.shutdown({ force: true });
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
  });
});
