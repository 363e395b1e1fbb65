import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ClaudeTransport, createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import {
  type FakeCliControlAnswer,
  type FakeCliStep,
  agentErrorOf,
  fakeClaudeCliPath,
  fakeCliControls,
  fakeCliResult,
  fakeCliScript,
  runEvents,
  waitForEvent,
} from '@tether/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { transports } from '../conformance/conformance-harness.js';

// The interrupt receipt rules, for CLIs the real binary does not represent: one that cancels a
// send that never started (cancel_queued), and older ones without the `cancelled` list; and an exit
// right after a stop that came before the CLI took the turn. Both transports read the same receipts
// the same way.

let root: string;
let runtime: AgentRuntime | undefined;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'tether-interrupt-rules-'));
});

afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
  await rm(root, { recursive: true, force: true });
});

const started: FakeCliStep[] = [
  { line: { type: 'command_lifecycle', command_uuid: '$UUID', state: 'started' } },
  { line: { type: 'system', subtype: 'init', session_id: '$SESSION', user_message_uuids: ['$UUID'] } },
  {
    line: {
      type: 'stream_event',
      event: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'working' } },
      parent_tool_use_id: null,
    },
  },
];
// `errors` as the real CLI sends it: the Agent SDK reads it from every error result (and fails without it).
const aborted = fakeCliResult({
  subtype: 'error_during_execution',
  is_error: true,
  terminal_reason: 'aborted_streaming',
  errors: ['[ede_diagnostic] aborted'],
});

async function open(
  transport: ClaudeTransport,
  turn: FakeCliStep[],
  interrupt: FakeCliControlAnswer | FakeCliControlAnswer[],
) {
  const environment = {
    PATH: [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter),
    HOME: root,
    ...fakeCliScript([turn]),
    ...fakeCliControls({ interrupt }),
  };
  runtime = await createAgentRuntime({
    providers: [createClaudeProvider({ transport, claudePath: fakeClaudeCliPath(), environment })],
  });
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: root } });
  return { runtime, sessionId };
}

describe.each(transports)('interrupt receipts (scripted CLI) [%s transport]', (transport) => {
  it("ends a run whose input never started from the receipt's cancelled list: no result will come", async () => {
    const { runtime: current, sessionId } = await open(transport, [], {
      response: { still_queued: [], cancelled: ['$UUID'] },
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await waitForEvent(current, sessionId, 'session.process_started');
    await current.interruptRun({ sessionId });
    const events = await runEvents(current, sessionId, runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'interrupted' });
  });

  it('older CLIs: a stop that left the started input queued is reported not applied, and a retry stops it', async () => {
    const { runtime: current, sessionId } = await open(transport, started, [
      { response: { still_queued: ['$UUID'] } },
      { response: { still_queued: [] }, then: [aborted] },
    ]);
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await waitForEvent(current, sessionId, 'run.message_delta');
    const refused = await agentErrorOf(current.interruptRun({ sessionId }));
    expect(refused).toMatchObject({ code: 'provider_rejected', details: { reason: 'input_still_queued' } });
    await current.interruptRun({ sessionId });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    // The refusal is also a session warning, with a stable code.
    const warnings = (await current.readEvents(sessionId)).filter(
      (event) => event.type === 'diagnostic' && event.level === 'warning',
    );
    expect(warnings).toEqual([expect.objectContaining({ code: 'claude.interrupt_input_still_queued', runId })]);
  });

  it("the stop intent is provisional: a stop left queued, then the turn's own result, ends the run as that result says", async () => {
    const { runtime: current, sessionId } = await open(transport, started, {
      response: { still_queued: ['$UUID'] },
      then: [fakeCliResult()],
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await waitForEvent(current, sessionId, 'run.message_delta');
    expect(await agentErrorOf(current.interruptRun({ sessionId }))).toMatchObject({
      code: 'provider_rejected',
      details: { reason: 'input_still_queued' },
    });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it('a stop the CLI refuses with an error leaves the run the outcome its own result gives', async () => {
    const { runtime: current, sessionId } = await open(transport, started, {
      error: 'cannot stop now',
      then: [fakeCliResult()],
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await waitForEvent(current, sessionId, 'run.message_delta');
    expect(await agentErrorOf(current.interruptRun({ sessionId }))).toMatchObject({ code: 'provider_execution_error' });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
  });

  it("a result that overtakes the receipt waits for it: a refused stop keeps the result's outcome, an applied one makes it interrupted", async () => {
    const refusedAfterResult = await open(transport, started, { before: [fakeCliResult()], error: 'nothing to stop' });
    const first = await refusedAfterResult.runtime.submitTurn({
      sessionId: refusedAfterResult.sessionId,
      input: [{ type: 'text', text: 'go' }],
    });
    await waitForEvent(refusedAfterResult.runtime, refusedAfterResult.sessionId, 'run.message_delta');
    await agentErrorOf(refusedAfterResult.runtime.interruptRun({ sessionId: refusedAfterResult.sessionId }));
    expect(await refusedAfterResult.runtime.waitForRun(first.runId)).toMatchObject({ outcome: 'succeeded' });
    await refusedAfterResult.runtime.shutdown();

    const appliedAfterResult = await open(transport, started, {
      before: [fakeCliResult()],
      response: { still_queued: [] },
    });
    const second = await appliedAfterResult.runtime.submitTurn({
      sessionId: appliedAfterResult.sessionId,
      input: [{ type: 'text', text: 'go' }],
    });
    await waitForEvent(appliedAfterResult.runtime, appliedAfterResult.sessionId, 'run.message_delta');
    await appliedAfterResult.runtime.interruptRun({ sessionId: appliedAfterResult.sessionId });
    expect(await appliedAfterResult.runtime.waitForRun(second.runId)).toMatchObject({ outcome: 'interrupted' });
  });

  it('a stop answered before the CLI took the turn, then the CLI exits: the run ends interrupted, the turn is not sent again', async () => {
    // The CLI answers the stop as at idle and exits before it said anything of the turn. Sent again
    // to a new process (as an unanswered turn is), the turn would run unstopped; this script's second
    // process would not answer it at all, and the run would never end.
    const { runtime: current, sessionId } = await open(transport, [], {
      response: { still_queued: [] },
      then: [{ exit: 0 }],
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    // The turn is written to a running CLI, which says nothing of it.
    await waitForEvent(current, sessionId, 'session.process_started');
    await current.interruptRun({ sessionId });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
    const events = await current.readEvents(sessionId);
    expect(events.filter((event) => event.type === 'session.process_started')).toHaveLength(1);
  }, 15_000);

  it('older CLIs on a first turn: the CLI latches the stop and the turn ends aborted', async () => {
    const { runtime: current, sessionId } = await open(transport, started, {
      response: { still_queued: [] },
      then: [aborted],
    });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'go' }] });
    await waitForEvent(current, sessionId, 'run.message_delta');
    await current.interruptRun({ sessionId });
    expect(await current.waitForRun(runId)).toMatchObject({ outcome: 'interrupted' });
  });
});
