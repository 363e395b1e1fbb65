import { existsSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { createAgentRuntime } from '@tether/runtime';
import { type ClaudeTestEnvironment, agentErrorOf, createClaudeTestEnvironment, runEvents, waitForEvent } from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

const color = { question: 'Which color should the button be?', header: 'Color', options: [{ label: 'Red', description: 'warm' }, { label: 'Blue', description: 'cool' }], multiSelect: false };
const sizes = { question: 'Which sizes should we ship?', header: 'Sizes', options: [{ label: 'Small', description: 's' }, { label: 'Medium', description: 'm' }, { label: 'Large', description: 'l' }], multiSelect: true };

function lastToolResult(): { content: string; isError: boolean } {
  return environment.api.requests.filter((request) => request.kind === 'turn').at(-1)!.view!.toolResults[0]!;
}

async function askQuestions(questions: unknown[], options: { sensitive?: boolean } = {}) {
  environment = await createClaudeTestEnvironment();
  const runtime = options.sensitive ? await createAgentRuntime({ providers: [environment.provider()], isSensitive: () => true }) : await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  environment.api.enqueue(toolUseReply('AskUserQuestion', { questions }), textReply('Thanks for answering.'));
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Ask me.' }] });
  const cleanup = options.sensitive ? () => runtime.shutdown() : async () => {};
  return { runtime, sessionId, runId, cleanup };
}

describe('structured questions (AskUserQuestion) through the real claude binary', () => {
  it('answers a single-select and a multi-select question, keyed by the full question text', async () => {
    const { runtime, sessionId, runId } = await askQuestions([color, sizes]);
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    expect(requested.request).toMatchObject({ kind: 'question_set', sensitive: false, questions: [{ question: color.question, multiSelect: false }, { question: sizes.question, multiSelect: true }] });
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'answer', answers: [{ selected: ['Blue'] }, { selected: ['Small', 'Large'] }] } });
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.at(-1)).toMatchObject({ type: 'run.completed', outcome: 'succeeded' });
    const result = lastToolResult();
    expect(result.isError).toBe(false);
    expect(result.content).toContain(`"${color.question}"="Blue"`);
    expect(result.content).toContain(`"${sizes.question}"="Small, Large"`);
  });

  it('passes free text and an explicitly skipped question', async () => {
    const { runtime, sessionId, runId } = await askQuestions([color, sizes]);
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'answer', answers: [{ text: 'Green, actually' }, { skipped: true }] } });
    await runEvents(runtime, sessionId, runId);
    const result = lastToolResult();
    expect(result.content).toContain('Green, actually');
    expect(result.content).not.toContain(`"${sizes.question}"=`);
  });

  it('refuses a partial answer before anything reaches the CLI; the set stays pending', async () => {
    const { runtime, sessionId, runId } = await askQuestions([color, sizes]);
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    const partial = await agentErrorOf(runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'answer', answers: [{ selected: ['Red'] }] } }));
    expect(partial.code).toBe('invalid_command');
    const unknownLabel = await agentErrorOf(runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'answer', answers: [{ selected: ['Purple'] }, { skipped: true }] } }));
    expect(unknownLabel.code).toBe('invalid_command');
    expect((await runtime.getSession(sessionId)).pendingInteractions).toHaveLength(1);
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'decline' } });
    await runEvents(runtime, sessionId, runId);
    expect(lastToolResult()).toMatchObject({ isError: true });
  });

  it('refuses question sets past the neutral bounds whole: no interaction, a denial the model sees, one diagnostic', async () => {
    // The CLI itself rejects duplicate questions and strips answers pre-filled by the model before
    // asking (seen on 2.1.332); an overlong question it passes on, and Tether refuses it.
    const { runtime, sessionId, runId } = await askQuestions([{ ...color, question: `${'Why? '.repeat(500)}Which one?` }]);
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.filter((event) => event.type === 'interaction.requested')).toHaveLength(0);
    expect(lastToolResult()).toMatchObject({ isError: true });
    expect(lastToolResult().content).toContain('could not be shown');
    const all = await runtime.readEvents(sessionId);
    expect(all.filter((event) => event.type === 'diagnostic' && event.code === 'claude.question_refused.text_too_long')).toHaveLength(1);
  });

  it('redacts the answers of a sensitive question set in the log, while the CLI receives them', async () => {
    const { runtime, sessionId, runId, cleanup } = await askQuestions([{ ...color, question: 'What is the deploy password?' }], { sensitive: true });
    try {
      const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
      expect(requested.request).toMatchObject({ kind: 'question_set', sensitive: true });
      await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'answer', answers: [{ text: 'hunter2-secret' }] } });
      const events = await runEvents(runtime, sessionId, runId);
      expect(events.find((event) => event.type === 'interaction.settled')).toMatchObject({ outcome: 'answered', answer: null });
      expect(JSON.stringify(await runtime.readEvents(sessionId))).not.toContain('hunter2-secret');
      expect(lastToolResult().content).toContain('hunter2-secret');
    } finally {
      await cleanup();
    }
  });
});

describe('question policy', () => {
  it('with questions: deny the model is told to ask in its reply, and no interaction is raised', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime({ provider: { questions: 'deny' } });
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(toolUseReply('AskUserQuestion', { questions: [color] }), textReply('I will ask in text.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Ask me.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(events.filter((event) => event.type === 'interaction.requested')).toHaveLength(0);
    expect(lastToolResult()).toMatchObject({ isError: true });
    expect(lastToolResult().content).toContain('Ask them in your reply');
  });
});

describe('permission modes through the real claude binary', () => {
  it('reports the mode from the CLI, changes it live, and the snapshot follows', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(textReply('Hello.'), toolUseReply('Write', { file_path: path.join(environment.workspace, 'auto.txt'), content: 'auto' }), textReply('Written without asking.'));
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('ask_before_edit');

    const receipt = await runtime.setPermissionMode({ sessionId, mode: 'auto_edit' });
    expect(receipt.mode).toBe('auto_edit');
    const snapshot = await runtime.getSession(sessionId);
    expect(snapshot.permissionMode).toBe('auto_edit');
    const second = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write it.' }] });
    const events = await runEvents(runtime, sessionId, second.runId);
    expect(events.filter((event) => event.type === 'interaction.requested')).toHaveLength(0);
    expect(existsSync(path.join(environment.workspace, 'auto.txt'))).toBe(true);
    // The CLI's own status line and the command's answer may arrive in either order: one change each way, no repeats.
    const changes = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'session.mode_changed').map((event) => (event as { mode: string }).mode);
    expect(changes).toEqual(['ask_before_edit', 'auto_edit']);
  });

  it('follows a mode change the CLI makes itself (approving edits for the session)', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    environment.api.enqueue(toolUseReply('Write', { file_path: path.join(environment.workspace, 'edit.txt'), content: 'x' }), textReply('Done.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    expect(requested.request).toMatchObject({ kind: 'approval', toolName: 'Write', category: 'file_write', offerSessionApproval: true });
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve', scope: 'session' } });
    await runEvents(runtime, sessionId, runId);
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('auto_edit');
  });

  it('refuses a mode the running CLI cannot enter with requires_restart, and says so in advance', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    // Before any process runs, bypass just applies to the next launch.
    expect(await runtime.requiresRestartFor(sessionId, 'bypass')).toBe(false);
    environment.api.enqueue(textReply('Hi.'));
    await runtime.waitForRun((await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Hi.' }] })).runId);
    expect(await runtime.requiresRestartFor(sessionId, 'bypass')).toBe(true);
    expect(await runtime.requiresRestartFor(sessionId, 'plan')).toBe(false);
    const error = await agentErrorOf(runtime.setPermissionMode({ sessionId, mode: 'bypass' }));
    expect(error.code).toBe('requires_restart');
    expect((await runtime.getSession(sessionId)).permissionMode).toBe('ask_before_edit');
  });

  it('plan mode: ExitPlanMode is an approval; approving can choose the mode to continue in', async () => {
    environment = await createClaudeTestEnvironment();
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace }, permissionMode: 'plan' });
    environment.api.enqueue(toolUseReply('ExitPlanMode', { plan: '1. Change the thing\n2. Test it' }), textReply('Proceeding.'));
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Plan it.' }] });
    const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
    // 2.1.332 sends ExitPlanMode with an empty input: the plan text does not reach the host.
    expect(requested.request).toMatchObject({ kind: 'approval', toolName: 'ExitPlanMode', plan: '' });
    await runtime.respondInteraction({ sessionId, interactionRef: requested.interactionRef, answer: { decision: 'approve', continueInMode: 'auto_edit' } });
    await runEvents(runtime, sessionId, runId);
    const modes = (await runtime.readEvents(sessionId)).filter((event) => event.type === 'session.mode_changed').map((event) => (event as { mode: string }).mode);
    expect(modes).toEqual(['plan', 'auto_edit']);
  });
});
