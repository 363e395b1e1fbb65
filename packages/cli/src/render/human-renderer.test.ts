import type { EventBody, ProtocolEvent } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { HumanRenderer } from './human-renderer.js';

const sessionId = `ses_${'a'.repeat(32)}`;
const runId = `run_${'b'.repeat(32)}`;

function rendered(
  bodies: readonly EventBody[],
  options: { showRuns?: boolean } = {},
): { stdout: string; stderr: string } {
  const output = { stdout: '', stderr: '' };
  const renderer = new HumanRenderer(
    { write: (text) => (output.stdout += text) },
    { write: (text) => (output.stderr += text) },
    options,
  );
  bodies.forEach((body, index) =>
    renderer.event({ ...body, sessionId, seq: index + 1, at: '2026-12-01T10:00:00.000Z' } as ProtocolEvent),
  );
  return output;
}

const retrying = (abandonedBlockIds?: string[]): EventBody => ({
  type: 'run.retrying',
  runId,
  attempt: 1,
  maxAttempts: 2,
  delayMs: 500,
  httpStatus: null,
  ...(abandonedBlockIds ? { abandonedBlockIds } : {}),
});

const cutOff =
  '  · the text above was cut off when the call failed: it is not part of the answer, which follows in full\n';

describe('the human renderer', () => {
  it('shows the questions it waits on with their option labels (what an answers file names), model text made safe', () => {
    const { stdout, stderr } = rendered([
      {
        type: 'interaction.requested',
        runId,
        interactionRef: 'int_1',
        request: {
          kind: 'question_set',
          toolUseId: 'toolu_1',
          sensitive: false,
          questions: [
            {
              header: 'Colour',
              question: 'Which colour?\u001b[2J',
              multiSelect: false,
              options: [
                { label: 'Green', description: 'like grass' },
                { label: 'Blue', description: '' },
              ],
            },
          ],
        },
      } as EventBody,
    ]);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      '  · waiting for an answer to questions: ref int_1\n' +
        '    ? [Colour] Which colour?\n' +
        '        1) Green — like grass\n' +
        '        2) Blue\n',
    );
  });

  it('says what an error or a warning that changes what is shown means (an error without words by its code), and nothing of the rest', () => {
    const { stdout, stderr } = rendered([
      { type: 'diagnostic', runId, level: 'warning', code: 'workspace.changes_unreadable' },
      { type: 'diagnostic', runId, level: 'error', code: 'some.new_code' },
      { type: 'diagnostic', level: 'warning', code: 'claude.stdin_closed' },
      { type: 'diagnostic', level: 'info', code: 'claude.stall_detected' },
      { type: 'diagnostic', level: 'debug', code: 'claude.frames_unstamped' },
    ]);
    expect(stdout).toBe('');
    expect(stderr).toBe(
      "  · warning: the run's changed files could not be read (tether diff shows git's error): the count shown is not this run's\n" +
        '  · error: some.new_code\n',
    );
  });

  it('says a follow-up the budget refused was refused for the budget, with the way on in tether words', () => {
    const output = { stdout: '', stderr: '' };
    const renderer = new HumanRenderer(
      { write: (text) => (output.stdout += text) },
      { write: (text) => (output.stderr += text) },
    );
    renderer.summary(
      {
        runId,
        outcome: 'interrupted',
        usage: null,
        inputCancelled: 'agent_refused',
        error: {
          code: 'budget_exceeded',
          message:
            "The session has spent $0.0012 of its $0.001 budget (maxCostUsd), so it takes no more turns (a session's budget cannot be raised). To go on, fork it (fork_session: its conversation continues in a new session with a budget of its own), or open a new session.",
          retryable: false,
          details: { reason: 'max_cost' },
        },
      },
      sessionId,
    );
    expect(output.stderr).toContain("■ not sent: the follow-up was cancelled (the session's budget is spent)");
    expect(output.stderr).toContain(`fork it (\`tether fork ${sessionId}\``);
    expect(output.stderr).not.toContain('agent refused');
  });

  it('shows a turn the agent began by itself (tether attach) for what it is, not as an empty prompt', () => {
    const { stdout, stderr } = rendered(
      [
        { type: 'run.started', runId, input: [], inputRedacted: false, startedBy: 'agent' },
        { type: 'run.message_delta', runId, blockId: 'report:0', text: 'The background agent has finished.' },
      ],
      { showRuns: true },
    );
    expect(stderr).toBe('› (begun by the agent: a background task finished)\n');
    expect(stdout).toBe('The background agent has finished.');
  });

  it("shows a follower (tether attach) a steer's text, as it shows each run's prompt; a redacted one as redacted", () => {
    const inputId = `inp_${'c'.repeat(32)}`;
    const { stdout, stderr } = rendered(
      [
        { type: 'run.started', runId, input: [{ type: 'text', text: 'Count.' }], inputRedacted: false },
        { type: 'run.message_delta', runId, blockId: 'b0', text: 'One' },
        {
          type: 'input.queued',
          runId,
          inputId,
          delivery: 'steer',
          input: [{ type: 'text', text: 'Also\n mention bananas.' }],
          inputRedacted: false,
        },
        { type: 'input.queued', runId, inputId, delivery: 'steer', input: null, inputRedacted: true },
        { type: 'input.folded', runId, inputId },
      ] as EventBody[],
      { showRuns: true },
    );
    expect(stderr).toBe(
      `› Count.\n\n  › steered into the running turn (input ${inputId}): Also mention bananas.\n  › steered into the running turn (input ${inputId}): (prompt redacted)\n  · input ${inputId} folded into the running turn\n`,
    );
    expect(stdout).toBe('One');
  });

  it('says, to a follower (tether attach), when another client closes or reopens the session; a turn of its own says neither', () => {
    const bodies: EventBody[] = [
      { type: 'session.closed', reason: 'requested' },
      {
        type: 'session.opened',
        provider: 'claude',
        workspace: { kind: 'directory', path: '/work' },
        configuration: {},
        ephemeral: false,
        reopened: true,
      },
    ];
    expect(rendered(bodies, { showRuns: true }).stderr).toBe(
      `■ session ${sessionId} closed; still attached: it shows here again once reopened\n· session ${sessionId} reopened\n`,
    );
    expect(rendered(bodies).stderr).toBe('');
  });

  it('says the printed text of a model call that broke off is cut off when its retry abandons it', () => {
    const { stdout, stderr } = rendered([
      { type: 'run.message_delta', runId, blockId: 'cut:0', text: 'This reply is cut short by a d' },
      retrying(['cut:0']),
      { type: 'run.message_delta', runId, blockId: 'retried:0', text: 'Hello there.' },
    ]);
    // Streamed text cannot be taken back from a terminal: stdout keeps it, stderr says what it was.
    expect(stdout).toBe('This reply is cut short by a d\nHello there.');
    expect(stderr).toBe(`\n  · the model API failed; retry 1 of 2 in 0.5 s\n${cutOff}`);
  });

  it('says the printed text of a call that broke off with no retry after it is cut off, when the run ends', () => {
    const { stdout, stderr } = rendered([
      { type: 'run.message_delta', runId, blockId: 'cut:0', text: 'This reply is cut short by a d' },
      { type: 'run.completed', runId, outcome: 'failed', abandonedBlockIds: ['cut:0'] },
    ]);
    expect(stdout).toBe('This reply is cut short by a d');
    expect(stderr).toBe('\n  · the text above was cut off when the call failed: it is not part of an answer\n');
  });

  it('says nothing more when the retry abandons nothing it printed', () => {
    const { stderr } = rendered([
      { type: 'run.message_delta', runId, blockId: 'whole:0', text: 'A whole answer.\n' },
      retrying(),
      { type: 'run.thinking_delta', runId, blockId: 'cut:0', text: 'Let me s' },
      retrying(['cut:0']),
    ]);
    expect(stderr).not.toContain('cut off');
  });

  it('says when the context was compacted, on stderr, and the answer goes on on stdout', () => {
    const { stdout, stderr } = rendered([
      { type: 'context.compacted', runId, trigger: 'automatic', tokensBefore: 995_014, tokensAfter: 2629 },
      { type: 'run.message_delta', runId, blockId: 'after:0', text: 'Second answer.' },
    ]);
    expect(stdout).toBe('Second answer.');
    expect(stderr).toBe('  · Context compacted by the agent as it filled up: 995,014 → 2,629 tokens\n');
  });

  it('says why nothing happens while a turn waits for a process, and a plan-limit hold once however often it is checked', () => {
    const inputId = `inp_${'c'.repeat(32)}`;
    const until = '2026-12-01T14:05:00.000Z';
    const held = (at: string): EventBody => ({ type: 'input.held', inputId, runId, until: at, reason: 'plan_limit' });
    const { stderr } = rendered([
      { type: 'run.queued', runId, position: 2 },
      held(until),
      held(until),
      held('2026-12-01T15:05:00.000Z'),
    ]);
    expect(stderr).toContain('  · waiting for a free agent process (2 ahead)\n');
    expect(stderr.match(/held by the plan limit until/g)).toHaveLength(2);
    expect(stderr).toContain(`held by the plan limit until ${until}`);
    expect(stderr).toContain('held by the plan limit until 2026-12-01T15:05:00.000Z');
  });
});
