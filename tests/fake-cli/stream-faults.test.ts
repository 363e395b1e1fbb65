import path from 'node:path';
import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';
import { type FakeCliStep, answerText, fakeCliTurn, processesWithEnvironment, runEvents } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';
import { useFakeRuntime } from './fake-runtime-harness.js';

// What the agent's pipes can do to a run: an enormous line, a line cut off, a CLI that goes quiet
// mid-line, a CLI that stops reading its stdin. Each ends the run with a stable code in bounded
// time, leaves no process behind, and the session's next turn works.

const harness = useFakeRuntime('tether-stream-faults-');

/** Small watchdog times, so that a stall is found in well under a second. */
const quickStall = { stallTimeoutMs: 400, stallGraceMs: 400 } as const;
/**
 * For a line of 65 MiB: only whole lines re-arm the watchdog, and on a loaded 2-core machine the
 * line took longer to arrive than quickStall allows (the run stalled before it was found too long).
 */
const enormousLineStall = { stallTimeoutMs: 3_000, stallGraceMs: 400 } as const;

async function timedTurn(current: AgentRuntime, sessionId: string, text = 'hello', signal?: AbortSignal) {
  const began = Date.now();
  const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const run = await current.waitForRun(runId, signal ? { signal } : {});
  return { run, elapsed: Date.now() - began };
}

/** A turn as the real CLI starts it: init, then the API request it waits on (what arms the stall watchdog). */
function turnOpening(text: string): FakeCliStep[] {
  const [init, messageStart, delta] = fakeCliTurn(text);
  return [
    init!,
    { line: { type: 'system', subtype: 'status', status: 'requesting', session_id: '$SESSION' } },
    messageStart!,
    delta!,
  ];
}

const resultFrame = JSON.stringify((fakeCliTurn('').at(-1) as { line: object }).line);

/** One line of `megabytes` MiB and more (64 KiB pieces: the script travels in an environment variable). */
function enormousLine(prefix: string, megabytes: number, suffix: string): FakeCliStep[] {
  return [{ raw: prefix }, { raw: 'x'.repeat(64 * 1024), times: megabytes * 16 }, { raw: suffix }];
}

function diagnostics(events: readonly ProtocolEvent[], code: string): ProtocolEvent[] {
  return events.filter((event) => event.type === 'diagnostic' && event.code === code);
}

function expectNoProcessLeft(events: readonly ProtocolEvent[]): void {
  const markers = events.flatMap((event) => (event.type === 'session.process_started' ? [event.marker] : []));
  expect(markers.length).toBeGreaterThan(0);
  for (const marker of markers) expect(processesWithEnvironment('TETHER_PROCESS_MARKER', marker)).toEqual([]);
}

describe('stdout lines beyond the 64 MiB bound (scripted fake CLI) [cli transport]', () => {
  // The Agent SDK reads the CLI's stdout itself (no bound of Tether's applies there); see docs/reliability.md.
  it('drops an enormous line without buffering it, notes it once, and the turn goes on to its result', async () => {
    const [init, messageStart, delta, result] = fakeCliTurn('fine');
    const { runtime: current, sessionId } = await harness.open('cli', [
      [init!, messageStart!, ...enormousLine('{"type":"assistant","padding":"', 65, '"}\n'), delta!, result!],
    ]);
    const { run } = await timedTurn(current, sessionId);
    expect(run.outcome).toBe('succeeded');
    const events = await current.readEvents(sessionId);
    expect(answerText(events)).toBe('fine');
    expect(diagnostics(events, 'claude.stdout_line_too_long')).toHaveLength(1);
  });

  it('an enormous result line (the CLI then waits for input) fails the run provider_stalled after the stall timeout, not a hang; the next turn works', async () => {
    const gate = path.join(harness.root, 'stalled-once');
    const hugeResult = enormousLine(`${resultFrame.slice(0, -1)},"padding":"`, 65, '"}\n');
    // Only the first process writes the enormous line and waits; the second (the next turn) answers at once.
    const { runtime: current, sessionId } = await harness.open(
      'cli',
      [[{ once: gate, steps: [...turnOpening('lost'), ...hugeResult, { hang: true }] }, ...fakeCliTurn('back')]],
      enormousLineStall,
    );
    const { run, elapsed } = await timedTurn(current, sessionId);
    expect(run).toMatchObject({ outcome: 'failed', error: { code: 'provider_stalled' } });
    expect(elapsed).toBeLessThan(enormousLineStall.stallTimeoutMs + enormousLineStall.stallGraceMs + 5_000);
    const events = await current.readEvents(sessionId);
    expect(diagnostics(events, 'claude.stdout_line_too_long')).toHaveLength(1);
    expectNoProcessLeft(events);
    const next = await timedTurn(current, sessionId, 'again');
    expect(next.run.outcome).toBe('succeeded');
  });
});

describe.each(transports)('cut-off and silent output (scripted fake CLI) [%s transport]', (transport) => {
  it('a last line cut off mid-JSON, then exit 0: provider_contract_violation (exit without a result), and the next turn works', async () => {
    const { runtime: current, sessionId } = await harness.open(transport, [
      [...turnOpening('partial'), { raw: resultFrame.slice(0, 40) }, { exit: 0 }],
    ]);
    const { run } = await timedTurn(current, sessionId);
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_contract_violation', details: { reason: 'exit_without_result', exitCode: 0 } },
    });
    const events = await current.readEvents(sessionId);
    // The cli transport's decoder reports the cut-off line; the Agent SDK drops it silently.
    expect(diagnostics(events, 'claude.stdout_not_json')).toHaveLength(transport === 'cli' ? 1 : 0);
    expectNoProcessLeft(events);
    // The new process gets the same script: its turn is cut off again, and ends the same way, not a hang.
    expect((await timedTurn(current, sessionId, 'again')).run.outcome).toBe('failed');
  });

  it('a CLI that goes silent in the middle of a line fails the run provider_stalled within the stall timeout and grace, and is stopped; the next turn works', async () => {
    const gate = path.join(harness.root, 'silent-once');
    const { runtime: current, sessionId } = await harness.open(
      transport,
      [
        [
          ...turnOpening('half'),
          { raw: resultFrame.slice(0, 40) },
          { hang: gate },
          { raw: '\n' },
          ...fakeCliTurn('back'),
        ],
      ],
      quickStall,
    );
    const { run, elapsed } = await timedTurn(current, sessionId);
    expect(run).toMatchObject({ outcome: 'failed', error: { code: 'provider_stalled' } });
    expect(elapsed).toBeGreaterThanOrEqual(quickStall.stallTimeoutMs);
    expect(elapsed).toBeLessThan(quickStall.stallTimeoutMs + quickStall.stallGraceMs + 5_000);
    const events = await current.readEvents(sessionId);
    expect(diagnostics(events, 'claude.stall_detected')).toHaveLength(1);
    expectNoProcessLeft(events);
    // The new process gets the same script: the opening again, then past the gate an ordinary turn.
    const next = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'again' }] });
    expect(answerText(await runEvents(current, sessionId, next.runId))).toBe('halfback');
  });

  // A turn written to a live CLI that closed its stdin: the write fails (EPIPE) and nothing can reach
  // the CLI again; once it is still running a moment later (1 s) it is stopped and the run fails.
  it('a CLI that closed its stdin (the turn write fails with EPIPE) fails the run and is stopped; the next turn starts a new process', async () => {
    // Each process closes its stdin before its first result, and lives on: the next turn's write is sure to fail.
    const answered = fakeCliTurn('answered');
    const { runtime: current, sessionId } = await harness.open(transport, [
      [...answered.slice(0, -1), { closeStdin: true }, answered.at(-1)!],
    ]);
    expect((await timedTurn(current, sessionId, 'first')).run.outcome).toBe('succeeded');
    const { run, elapsed } = await timedTurn(current, sessionId, 'second', AbortSignal.timeout(5_000));
    expect(run).toMatchObject({
      outcome: 'failed',
      error: { code: 'provider_crashed', details: { reason: 'stdin_closed' } },
    });
    expect(elapsed).toBeLessThan(5_000);
    expectNoProcessLeft(await current.readEvents(sessionId));
    const next = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'third' }] });
    expect(answerText(await runEvents(current, sessionId, next.runId))).toBe('answered');
  });
});
