import { AgentError, errorCodes } from '@tether/protocol';
import { type MockTurnContext, createMockProvider, waitForEvent, sampleApprovalRequest } from '@tether/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { runtimePerTest } from './runtime-per-test.test-helper.js';

// A refused command must leave everything as it was: the log, the session, its run, its pending
// interaction, and the provider (which must not have heard of it).

const perTest = runtimePerTest('tether-refusal-');

const interactionRef = `int_${'1'.repeat(32)}`;
const approval = sampleApprovalRequest();

/** Commands aimed at the live session and its pending approval, most of them wrong in one way or another. */
function commandFor(sessionId: string, runId: string) {
  const answer = fc.oneof(
    fc.record(
      {
        decision: fc.constantFrom('approve', 'deny', 'answer', 'decline', 'maybe'),
        scope: fc.constantFrom('once', 'session', 'local_settings', 'forever'),
      },
      { requiredKeys: ['decision'] },
    ),
    fc.record({ decision: fc.constant('approve'), continueInMode: fc.constantFrom('plan', 'auto_edit') }),
    fc.record({
      decision: fc.constant('answer'),
      answers: fc.array(fc.record({ selected: fc.array(fc.string(), { maxLength: 2 }) }), { maxLength: 2 }),
    }),
    fc.jsonValue(),
  );
  const reference = fc.constantFrom(interactionRef, `int_${'2'.repeat(32)}`, 'int_short');
  const session = fc.constantFrom(sessionId, `ses_${'f'.repeat(32)}`, 'ses_nope');
  const commandId = fc.stringMatching(/^[a-z]{1,6}$/).map((suffix) => `cmd-${suffix}`);
  return fc
    .oneof(
      fc.record({
        type: fc.constant('respond_interaction'),
        commandId,
        sessionId: session,
        interactionRef: reference,
        answer,
      }),
      fc.record({
        type: fc.constant('submit_turn'),
        commandId,
        sessionId: session,
        input: fc.constantFrom([{ type: 'text', text: 'again' }], [{ type: 'image' }], [], 'text'),
      }),
      fc.record({
        type: fc.constant('interrupt_run'),
        commandId,
        sessionId: session,
        runId: fc.constantFrom(`run_${'9'.repeat(32)}`, 'run_bad'),
      }),
      fc.record({
        type: fc.constantFrom('set_permission_mode'),
        commandId,
        sessionId: session,
        mode: fc.constantFrom('bypass', 'yolo', 7),
      }),
      fc.record({
        type: fc.constantFrom('run_control', 'set_model', 'close_session'),
        commandId,
        sessionId: fc.constantFrom(`ses_${'f'.repeat(32)}`, 'ses_nope'),
        name: fc.constantFrom('compact', '--x'),
      }),
      fc.anything(),
    )
    .map((command) => ({ command, runId }));
}

describe('command refusal (property-based)', () => {
  it('a refused command is a typed AgentError and changes no state anywhere', async () => {
    let turn: MockTurnContext | undefined;
    const provider = createMockProvider({
      turn: (context) => {
        turn = context;
        context.emit({ type: 'interaction.requested', runId: context.runId, interactionRef, request: approval });
      },
    });
    const current = await perTest.start({ providers: [provider] });
    const { sessionId } = await current.openSession({ workspace: { kind: 'directory', path: perTest.workspace } });
    const { runId } = await current.submitTurn({ sessionId, input: [{ type: 'text', text: 'Go' }] });
    await waitForEvent(current, sessionId, 'interaction.requested');
    const snapshot = async () => ({
      events: await current.readEvents(sessionId),
      session: await current.getSession(sessionId),
      run: await current.getRun(runId),
      sessions: await current.listSessions(),
      provider: JSON.stringify(
        provider.sessions.map(({ turns, stops, responses, modes, interrupts }) => ({
          turns,
          stops,
          responses,
          modes,
          interrupts,
        })),
      ),
    });
    let refusals = 0;
    await fc.assert(
      fc.asyncProperty(commandFor(sessionId, runId), async ({ command }) => {
        const before = await snapshot();
        let error: unknown;
        try {
          await current.dispatch(command);
          return;
        } catch (caught) {
          error = caught;
        }
        refusals += 1;
        expect(AgentError.isInstance(error)).toBe(true);
        expect(errorCodes).toContain((error as AgentError).code);
        expect(await snapshot()).toEqual(before);
      }),
      { numRuns: 150 },
    );
    // The property is about refusals: most generated commands must have been refused.
    expect(refusals).toBeGreaterThan(100);
    expect(turn?.runId).toBe(runId);
  });
});
