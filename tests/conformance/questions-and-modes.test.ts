import { existsSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { createAgentRuntime } from '@tether/runtime';
import { agentErrorOf, runEvents, sampleQuestions, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  describeTransports,
  invokedToken,
  lastToolResult,
  returnedToken,
  runSequence,
  sessionSequence,
} from './conformance-harness.js';

const { color, sizes } = sampleQuestions;

// The questions reach the log as the call's input; the result's text (the answers) never does.
const answered = [
  'run.started',
  invokedToken('AskUserQuestion', { questions: [color, sizes] }),
  'interaction.requested:question_set',
  'interaction.settled:answered:host',
  'run.tool_activity:succeeded:AskUserQuestion',
  'run.message_delta…',
  'run.usage',
  'run.checkpointed',
  'run.completed:succeeded:end_turn',
];

describeTransports('structured questions (AskUserQuestion)', ({ start }) => {
  async function askQuestions(questions: unknown[], options: { sensitive?: boolean } = {}) {
    const environment = await start();
    const runtime = options.sensitive
      ? await createAgentRuntime({ providers: [environment.provider()], isSensitive: () => true })
      : await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(toolUseReply('AskUserQuestion', { questions }), textReply('Thanks for answering.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Ask me.' }] });
    const cleanup = options.sensitive ? () => runtime.shutdown() : async () => {};
    return { environment, runtime, sessionId, runId, cleanup };
  }

  it('answers a single-select and a multi-select question, keyed by the full question text', async () => {
    const { environment, runtime, sessionId, runId } = await askQuestions([color, sizes]);
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    expect(requested.request).toEqual({
      kind: 'question_set',
      toolUseId: expect.any(String),
      sensitive: false,
      questions: [
        { header: 'Color', question: color.question, options: color.options, multiSelect: false },
        { header: 'Sizes', question: sizes.question, options: sizes.options, multiSelect: true },
      ],
    });
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'answer', answers: [{ selected: ['Blue'] }, { selected: ['Small', 'Large'] }] },
    });
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual(answered);
    const result = lastToolResult(environment);
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`"${color.question}"="Blue"`);
    expect(result.content).toContain(`"${sizes.question}"="Small, Large"`);
  });

  it('passes free text and an explicitly skipped question', async () => {
    const { environment, runtime, sessionId, runId } = await askQuestions([color, sizes]);
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'answer', answers: [{ text: 'Green, actually' }, { skipped: true }] },
    });
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual(answered);
    expect(lastToolResult(environment).content).toContain('Green, actually');
    expect(lastToolResult(environment).content).not.toContain(`"${sizes.question}"=`);
  });

  it('refuses a partial answer before anything reaches the agent; the set stays pending; decline is a denial', async () => {
    const { environment, runtime, sessionId, runId } = await askQuestions([color, sizes]);
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    const partial = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'answer', answers: [{ selected: ['Red'] }] },
      }),
    );
    expect(partial.code).toBe('invalid_command');
    const unknownLabel = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'answer', answers: [{ selected: ['Purple'] }, { skipped: true }] },
      }),
    );
    expect(unknownLabel.code).toBe('invalid_command');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'decline' },
    });
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual([
      ...answered.slice(0, 3),
      'interaction.settled:declined:host',
      'run.tool_activity:failed:AskUserQuestion',
      ...answered.slice(5),
    ]);
    expect(lastToolResult(environment)).toMatchObject({ isError: true });
  });

  it('refuses question sets past the neutral bounds whole: no interaction, a denial the model sees, one diagnostic', async () => {
    const tooLong = { ...color, question: `${'Why? '.repeat(500)}Which one?` };
    const { environment, runtime, sessionId, runId } = await askQuestions([tooLong]);
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual([
      'run.started',
      invokedToken('AskUserQuestion', { questions: [tooLong] }),
      'diagnostic:warning:claude.question_refused.text_too_long',
      'run.tool_activity:failed:AskUserQuestion',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(lastToolResult(environment)).toMatchObject({ isError: true });
    expect(lastToolResult(environment).content).toContain('could not be shown');
  });

  it('redacts the answers of a sensitive question set in the log, while the agent receives them', async () => {
    const { environment, runtime, sessionId, runId, cleanup } = await askQuestions(
      [{ ...color, question: 'What is the deploy password?' }],
      { sensitive: true },
    );
    try {
      const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
      expect(requested.request).toMatchObject({ kind: 'question_set', sensitive: true });
      await runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'answer', answers: [{ text: 'hunter2-secret' }] },
      });
      const events = await runEvents(runtime, sessionId, runId);
      expect(events.find((event) => event.type === 'interaction.settled')).toMatchObject({
        outcome: 'answered',
        answer: null,
      });
      expect(JSON.stringify(await runtime.readEvents(sessionId))).not.toContain('hunter2-secret');
      expect(lastToolResult(environment).content).toContain('hunter2-secret');
    } finally {
      await cleanup();
    }
  });

  it('with questions: deny, denies through the prompt channel and tells the model to ask in its reply', async () => {
    const environment = await start();
    const runtime = await environment.runtime({ provider: { questions: 'deny' } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(toolUseReply('AskUserQuestion', { questions: [color] }), textReply('I will ask in text.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Ask me.' }] });
    expect(runSequence(await runEvents(runtime, sessionId, runId), runId)).toEqual([
      'run.started',
      invokedToken('AskUserQuestion', { questions: [color] }),
      'diagnostic:warning:claude.questions_denied_by_policy',
      'run.tool_activity:failed:AskUserQuestion',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(lastToolResult(environment)).toMatchObject({ isError: true });
    expect(lastToolResult(environment).content).toContain('Ask them in your reply');
  });
});

describeTransports('permission modes', ({ start }) => {
  it('reports the mode from the agent, changes it live, and the snapshot follows', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const file = path.join(environment.workspace, 'auto.txt');
    environment.api.enqueue(
      textReply('Hello.'),
      toolUseReply('Write', { file_path: file, content: 'auto' }),
      textReply('Written without asking.'),
    );
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('ask_before_edit');
    const receipt = await runtime.setPermissionMode({ sessionId, mode: 'auto_edit' });
    expect(receipt.mode).toBe('auto_edit');
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('auto_edit');
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write it.' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    expect(runSequence(events, second.runId)).toEqual([
      'run.started',
      invokedToken('Write', { file_path: file, content: 'auto' }),
      returnedToken(
        'succeeded',
        'Write',
        `File created successfully at: ${file} (file state is current in your context — no need to Read it back)`,
      ),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(existsSync(file)).toBe(true);
    // The agent's own status line and the command's answer may arrive in either order: one change each way, no repeats.
    const changes = (await runtime.readEvents(sessionId))
      .filter((event) => event.type === 'session.mode_changed')
      .map((event) => (event as { mode: string }).mode);
    expect(changes).toEqual(['ask_before_edit', 'auto_edit']);
  });

  it("a mode set live is recorded once, as the command's change, whichever of the agent's report and its answer comes first", async () => {
    const environment = await start();
    environment.api.setResponder(() => textReply('Hello.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    const before = (await runtime.readEvents(sessionId)).length;
    const modes = ['plan', 'auto_edit', 'dont_ask', 'ask_before_edit'] as const;
    for (let round = 0; round < 3; round += 1)
      for (const mode of modes) expect((await runtime.setPermissionMode({ sessionId, mode })).mode).toBe(mode);
    const changes = (await runtime.readEvents(sessionId))
      .slice(before)
      .filter((event) => event.type === 'session.mode_changed')
      .map((event) => `${(event as { mode: string }).mode}:${(event as { source: string }).source}`);
    expect(changes).toEqual([...modes, ...modes, ...modes].map((mode) => `${mode}:command`));
  });

  it('follows a mode change the agent makes itself (approving edits for the session)', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(
      toolUseReply('Write', { file_path: path.join(environment.workspace, 'edit.txt'), content: 'x' }),
      textReply('Done.'),
    );
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    expect(requested.request).toMatchObject({
      kind: 'approval',
      toolName: 'Write',
      category: 'file_write',
      offerSessionApproval: true,
    });
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve', scope: 'session' },
    });
    await runEvents(runtime, sessionId, runId);
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('auto_edit');
    expect(
      (await sessionSequence(runtime, sessionId)).filter((token) => token.startsWith('session.mode_changed')),
    ).toEqual(['session.mode_changed:ask_before_edit:provider', 'session.mode_changed:auto_edit:provider']);
  });

  it('refuses a mode the running agent cannot enter with requires_restart, says so in advance (and in the snapshot), and restarts into it when asked', async () => {
    const environment = await start({ sandbox: true });
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    // Before any process runs, bypass just applies to the next launch.
    expect(await runtime.requiresRestartFor(sessionId, 'bypass')).toBe(false);
    expect((await runtime.getSession(sessionId)).modesRequiringRestart).toEqual([]);
    environment.api.enqueue(textReply('Hi.'));
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    expect(await runtime.requiresRestartFor(sessionId, 'bypass')).toBe(true);
    expect(await runtime.requiresRestartFor(sessionId, 'plan')).toBe(false);
    expect((await runtime.getSession(sessionId)).modesRequiringRestart).toEqual(['bypass']);
    const error = await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'bypass' }));
    expect(error.code).toBe('requires_restart');
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('ask_before_edit');
    // Asked to, the runtime stops the agent instead; the mode applies from its next launch.
    expect((await runtime.setPermissionMode({ sessionId, mode: 'bypass', restart: true })).mode).toBe('bypass');
    expect(await runtime.getSession(sessionId)).toMatchObject({
      permissionMode: 'bypass',
      modesRequiringRestart: [],
      configuration: { permissionMode: 'bypass' },
    });
    expect((await runtime.readEvents(sessionId)).slice(-2)).toMatchObject([
      { type: 'session.process_stopped', reason: 'released' },
      { type: 'session.mode_changed', mode: 'bypass', source: 'command' },
    ]);
  });

  it('plan mode: the plan the model wrote to its plan file reaches the host in the ExitPlanMode approval; approving can choose the mode to continue in', async () => {
    const environment = await start();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      permissionMode: 'plan',
    });
    // As a model does in plan mode: write the plan to the file the CLI names in its system prompt, then ask to exit.
    const plan = '# The plan\n\n1. Change the thing\n2. Test it\n';
    let planFile = '';
    environment.api.setResponder((view) => {
      planFile = /[^"\\ ]*\.claude\/plans\/[^"\\ ]*\.md/.exec(JSON.stringify(view.body))?.[0] ?? 'no plan file named';
      environment.api.setResponder(() => toolUseReply('ExitPlanMode', {}));
      return toolUseReply('Write', { file_path: planFile, content: plan });
    });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Plan it.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    expect(planFile).toContain(path.join(environment.home, '.claude', 'plans'));
    // Writing the plan file is allowed in plan mode without asking; leaving plan mode is asked.
    expect(requested.request).toMatchObject({
      kind: 'approval',
      toolName: 'ExitPlanMode',
      plan,
      offerSessionApproval: false,
    });
    environment.api.setResponder(() => textReply('Proceeding.'));
    // A mode the running agent cannot enter live is refused, not taken and silently not applied.
    const bypass = await agentErrorOf(
      runtime.respondInteraction({
        sessionId,
        interactionRef: requested.interactionRef,
        answer: { decision: 'approve', continueInMode: 'bypass' },
      }),
    );
    expect(bypass).toMatchObject({ code: 'requires_restart', details: { reason: 'bypass' } });
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({
      sessionId,
      interactionRef: requested.interactionRef,
      answer: { decision: 'approve', continueInMode: 'auto_edit' },
    });
    expect(await runtime.waitForRun(runId)).toMatchObject({ outcome: 'succeeded' });
    const modes = (await runtime.readEvents(sessionId))
      .filter((event) => event.type === 'session.mode_changed')
      .map((event) => (event as { mode: string }).mode);
    expect(modes).toEqual(['plan', 'auto_edit']);
  });
});
