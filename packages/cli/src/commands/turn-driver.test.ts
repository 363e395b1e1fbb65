import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { ShutdownSignal } from '@tether/runtime';
import { createAgentRuntime } from '@tether/runtime';
import { createMockProvider } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliContext } from '../cli-context.js';
import { type TurnStopper, driveTurn } from './turn-driver.js';

const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A command's context whose signals the test sends (no process signal is involved). */
function contextWithSignals(cwd: string) {
  const listeners: ((count: number, signal: ShutdownSignal) => void)[] = [];
  let count = 0;
  const sink = () => ({ write: () => true }) as unknown as CliContext['stdout'];
  const context: CliContext = {
    stdout: sink(),
    stderr: sink(),
    environment: {},
    cwd,
    stdin: new PassThrough(),
    stdoutIsTerminal: false,
    terminal: undefined,
    onInterrupt: (listener) => {
      listeners.push(listener);
      return () => listeners.splice(listeners.indexOf(listener), 1);
    },
    exitAfter: () => undefined,
  };
  const signal = (name: ShutdownSignal) => {
    count += 1;
    for (const listener of [...listeners]) listener(count, name);
  };
  return { context, signal };
}

/** A runtime over a mock agent, the command's context, and a stopper that shuts the runtime down and keeps what it is told to discard. */
async function setUp(provider: ReturnType<typeof createMockProvider>) {
  const cwd = await mkdtemp(path.join(os.tmpdir(), 'tether-turn-driver-'));
  folders.push(cwd);
  const runtime = await createAgentRuntime({ providers: [provider] });
  const { context, signal } = contextWithSignals(cwd);
  const discarded: string[] = [];
  const stopper: TurnStopper = {
    terminate: () => void runtime.shutdown({ graceMs: 0, force: true }),
    discardUnused: async (sessionId) => {
      discarded.push(sessionId);
    },
  };
  return { cwd, runtime, context, signal, discarded, stopper };
}

describe('driveTurn stopped by a signal', () => {
  it('between the session opened for its turn and the turn going in: that session is handed over to be discarded', async () => {
    const { cwd, runtime, context, signal, discarded, stopper } = await setUp(createMockProvider());
    let opened: string | undefined;
    // The runtime's own surface; the signal comes as its opening answers, before the turn is sent.
    const backend = new Proxy(runtime, {
      get(target, property) {
        if (property !== 'openSession') return Reflect.get(target, property, target);
        return async (command: Parameters<typeof runtime.openSession>[0]) => {
          const receipt = await target.openSession(command);
          opened = receipt.sessionId;
          signal('SIGTERM');
          return receipt;
        };
      },
    });

    const code = await driveTurn(backend, { cwd, prompt: 'Hi.', json: false, responder: null }, context, stopper);

    expect(code).toBe(143);
    expect(opened).toMatch(/^ses_/);
    expect(discarded).toEqual([opened]);
  });

  it('once its turn went in: nothing is discarded (the session holds the stopped run)', async () => {
    const { cwd, runtime, context, signal, discarded, stopper } = await setUp(
      createMockProvider({ turn: () => undefined }),
    );
    const backend = new Proxy(runtime, {
      get(target, property) {
        if (property !== 'submitTurn') return Reflect.get(target, property, target);
        return async (command: Parameters<typeof runtime.submitTurn>[0]) => {
          const receipt = await target.submitTurn(command);
          signal('SIGTERM');
          return receipt;
        };
      },
    });

    const code = await driveTurn(backend, { cwd, prompt: 'Hi.', json: false, responder: null }, context, stopper);

    expect(code).toBe(143);
    expect(discarded).toEqual([]);
  });

  it("a Ctrl-C after its run ended stops only its own run, not another caller's follow-up that started since", async () => {
    let followUp: string | null = null;
    const provider = createMockProvider({
      // The command's turn ends at once; the follow-up queued behind it runs until the test is done.
      turn: ({ runId, input, emit }) => {
        if (input[0]?.type === 'text' && input[0].text === 'Hi.')
          emit({ type: 'run.completed', runId, outcome: 'succeeded' });
      },
    });
    const { cwd, runtime, context, signal, stopper } = await setUp(provider);
    const interrupts: Promise<unknown>[] = [];
    const stopsAsked: (string | undefined)[] = [];
    const backend = new Proxy(runtime, {
      get(target, property) {
        if (property === 'submitTurn')
          return async (command: Parameters<typeof runtime.submitTurn>[0]) => {
            const receipt = await target.submitTurn(command);
            // Another caller queues a follow-up behind the command's turn, as it goes in.
            const queued = await target.submitTurn({
              sessionId: command.sessionId,
              input: [{ type: 'text', text: 'next' }],
              delivery: 'after_turn',
            });
            followUp = queued.runId;
            return receipt;
          };
        // Asked for once the run has ended and before the command returns: the follow-up runs by then.
        if (property === 'getSession')
          return async (sessionId: string) => {
            signal('SIGINT');
            return target.getSession(sessionId);
          };
        if (property === 'interruptRun')
          return (command: Parameters<typeof runtime.interruptRun>[0]) => {
            stopsAsked.push(command.runId);
            const interrupt = target.interruptRun(command);
            interrupts.push(interrupt);
            return interrupt;
          };
        return Reflect.get(target, property, target);
      },
    });

    await driveTurn(backend, { cwd, prompt: 'Hi.', json: false, responder: null }, context, stopper);
    await expect.poll(() => interrupts.length).toBe(1);
    await Promise.all(interrupts);

    expect(followUp).toMatch(/^run_/);
    expect(stopsAsked).toHaveLength(1);
    expect(stopsAsked[0]).not.toBe(followUp);
    expect(stopsAsked[0]).toMatch(/^run_/);
    expect(provider.sessions[0]!.interrupts).toEqual([]);
    expect((await runtime.getSession(provider.sessions[0]!.options.sessionId)).activeRunId).toBe(followUp);
    await runtime.shutdown({ graceMs: 0, force: true });
  });

  it("a Ctrl-C before its steer is accepted withdraws the steer, and leaves the other caller's run it was for alone", async () => {
    const held: ((outcome: 'succeeded') => void)[] = [];
    const provider = createMockProvider({
      turn: ({ runId, emit }) => {
        held.push((outcome) => emit({ type: 'run.completed', runId, outcome }));
      },
      steer: () => undefined,
      withdrawSteer: () => true,
    });
    const { cwd, runtime, context, signal } = await setUp(provider);
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: cwd } });
    const other = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'the other caller' }] });
    await expect.poll(() => held.length).toBe(1);
    const stopsAsked: (string | undefined)[] = [];
    const withdrawals: Promise<unknown>[] = [];
    const backend = new Proxy(runtime, {
      get(target, property) {
        if (property === 'submitTurn')
          return async (command: Parameters<typeof runtime.submitTurn>[0]) => {
            // The signal comes while the steer is on its way, before its receipt.
            signal('SIGINT');
            return target.submitTurn(command);
          };
        if (property === 'interruptRun')
          return (command: Parameters<typeof runtime.interruptRun>[0]) => {
            stopsAsked.push(command.runId);
            return target.interruptRun(command);
          };
        if (property === 'cancelQueuedInput')
          return (command: Parameters<typeof runtime.cancelQueuedInput>[0]) => {
            const withdrawal = target.cancelQueuedInput(command);
            withdrawals.push(withdrawal);
            return withdrawal;
          };
        return Reflect.get(target, property, target);
      },
    });
    const stopper: TurnStopper = { terminate: () => undefined };

    const driving = driveTurn(
      backend,
      { resume: sessionId, cwd, prompt: 'also this', delivery: 'steer', json: false, responder: null },
      context,
      stopper,
    );
    await expect.poll(() => withdrawals.length).toBe(1);
    await Promise.all(withdrawals);
    held[0]!('succeeded');
    await driving;

    expect(stopsAsked).toEqual([]);
    expect(await runtime.waitForRun(other.runId)).toMatchObject({ outcome: 'succeeded' });
    const cancelled = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'input.cancelled');
    expect(cancelled).toMatchObject([{ reason: 'withdrawn' }]);
    await runtime.shutdown({ graceMs: 0, force: true });
  });
});

describe('driveTurn while follow-ups are held by the plan limit', () => {
  it('says the turn runs now, ahead of them, however it was sent (a plain send jumps them as --queue does)', async () => {
    const { cwd, runtime, context } = await setUp(createMockProvider());
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: cwd } });
    const hold = { until: new Date(Date.now() + 3_600_000).toISOString(), reason: 'plan_limit' as const };
    const heldFollowUp = {
      inputId: `inp_${'1'.repeat(32)}`,
      delivery: 'after_turn' as const,
      runId: `run_${'2'.repeat(32)}`,
      queuedAt: new Date().toISOString(),
      preview: 'Later.',
      held: hold,
    };
    // The snapshot of a session whose follow-up the plan limit holds (the mock agent reports no limits,
    // and a held follow-up keeps no run from starting: the runtime takes the turn now either way).
    const backend = new Proxy(runtime, {
      get(target, property) {
        if (property === 'getSession')
          return async (id: string) => ({ ...(await target.getSession(id)), queuedInputs: [heldFollowUp] });
        return Reflect.get(target, property, target);
      },
    });
    for (const delivery of [undefined, 'after_turn', 'steer'] as const) {
      let stderr = '';
      const capturing: CliContext = {
        ...context,
        stderr: {
          write: (text: string) => {
            stderr += text;
            return true;
          },
        } as unknown as CliContext['stderr'],
      };
      const code = await driveTurn(
        backend,
        { resume: sessionId, cwd, prompt: 'Now.', json: false, responder: null, delivery },
        capturing,
        { terminate: () => undefined },
      );
      expect(code, String(delivery)).toBe(0);
      expect(stderr, String(delivery)).toContain(
        '  · runs now, ahead of the follow-up held by the plan limit (it waits for its reset)\n',
      );
    }
    await runtime.shutdown({ graceMs: 0, force: true });
  });
});
