import { execFileSync } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type FakeReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { AgentRuntime } from '@tether/runtime';
import {
  type ClaudeTestEnvironment,
  agentErrorOf,
  createClaudeTestEnvironment,
  waitForEvent,
  inputLifecycle,
} from '@tether/testkit';
import { afterEach, describe, expect, it } from 'vitest';

let environment: ClaudeTestEnvironment;

afterEach(async () => {
  await environment?.cleanup();
});

const turnRequests = () => environment.api.requests.filter((request) => request.kind === 'turn');

/** How the referenced file is broken while its follow-up waits. */
const breakages: [string, (file: string) => Promise<void>, string, RegExp][] = [
  ['deleted', (file) => rm(file), 'file_not_found', /notes\.txt does not exist/],
  [
    'replaced by a directory',
    async (file) => {
      await rm(file);
      await mkdir(file);
    },
    'file_kind_changed',
    /notes\.txt was a file when the turn was submitted and is a directory now/,
  ],
  [
    'replaced by a named pipe',
    async (file) => {
      await rm(file);
      execFileSync('mkfifo', [file]);
    },
    'file_not_regular',
    /notes\.txt is neither a regular file nor a directory/,
  ],
];

/**
 * A session whose first run waits for the approval of a Bash call; `queue` submits its follow-ups
 * meanwhile (nothing can start before the approval), then the call is approved and runs.
 */
async function behindAnApproval<T>(
  replies: FakeReply[],
  queue: (runtime: AgentRuntime, sessionId: string, notes: string) => Promise<T>,
) {
  environment = await createClaudeTestEnvironment();
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
  const notes = path.join(environment.workspace, 'notes.txt');
  await writeFile(notes, 'PLUM-42 shipped on Tuesday\n');
  environment.api.enqueue(toolUseReply('Bash', { command: 'echo ran > ran.txt', description: 'Run' }), ...replies);
  const first = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Run the tool.' }] });
  const requested = await waitForEvent(runtime, sessionId, 'interaction.requested');
  const queued = await queue(runtime, sessionId, notes);
  await runtime.respondInteraction({
    sessionId,
    interactionRef: requested.interactionRef,
    answer: { decision: 'approve' },
  });
  return { runtime, sessionId, first, notes, queued };
}

// The file reference is checked at submit; a follow-up waits, so its files are checked again as it
// starts, the same way: the real CLI would otherwise get a mention of nothing (an empty turn for the model).
describe('a queued follow-up whose referenced file broke while it waited (the real binary)', () => {
  it.each(breakages)(
    '%s: the follow-up is cancelled input_invalid, naming the file and what to do; the next one runs',
    async (_how, breakFile, reason, message) => {
      const { runtime, sessionId, first, queued } = await behindAnApproval(
        [textReply('First done.'), textReply('Bananas mentioned.')],
        async (runtime, sessionId, notes) => {
          const broken = await runtime.submitTurn({
            sessionId,
            input: [
              { type: 'text', text: 'Summarise the notes.' },
              { type: 'file', path: 'notes.txt' },
            ],
            delivery: 'after_turn',
          });
          const next = await runtime.submitTurn({
            sessionId,
            input: [{ type: 'text', text: 'Now mention bananas.' }],
            delivery: 'after_turn',
          });
          await breakFile(notes);
          return { broken, next };
        },
      );
      const { broken, next } = queued;

      expect((await runtime.waitForRun(first.runId)).outcome).toBe('succeeded');
      // Its run never exists: waiting for it says so.
      expect(await agentErrorOf(runtime.waitForRun(broken.runId))).toMatchObject({ code: 'run_not_found' });
      expect((await runtime.waitForRun(next.runId)).outcome).toBe('succeeded');

      const events = await runtime.readEvents(sessionId);
      const cancelled = events.find((event) => event.type === 'input.cancelled');
      expect(cancelled).toMatchObject({
        inputId: broken.inputId,
        runId: broken.runId,
        reason: 'input_invalid',
        error: { code: 'invalid_command', details: { reason, index: 1 } },
      });
      const error = cancelled?.type === 'input.cancelled' ? cancelled.error : undefined;
      expect(error?.message).toMatch(/^The follow-up was not started: a file it refers to changed while it was queued/);
      expect(error?.message).toMatch(message);
      expect(error?.message).toMatch(/Input part 2 of 2/);
      expect(error?.message).toMatch(/submit the follow-up again/);
      expect(inputLifecycle(events)).toEqual([
        `run.started ${first.runId}`,
        `input.queued ${broken.runId}`,
        `input.queued ${next.runId}`,
        `run.completed ${first.runId}`,
        `input.cancelled ${broken.runId}`,
        `input.started ${next.runId}`,
        `run.started ${next.runId}`,
        `run.completed ${next.runId}`,
      ]);
      // The model never got the broken follow-up: the tool call, its result, then the next follow-up.
      const requests = turnRequests();
      expect(requests).toHaveLength(3);
      expect(requests.some((request) => JSON.stringify(request.body).includes('Summarise the notes.'))).toBe(false);
      expect(requests[2]!.view!.lastUserText).toContain('Now mention bananas.');
      expect((await runtime.getSession(sessionId)).queuedInputs).toEqual([]);
    },
  );

  it('a file still there when the follow-up starts reaches the model with its content', async () => {
    const { runtime, sessionId, first, notes, queued } = await behindAnApproval(
      [textReply('First done.'), textReply('Summarised.')],
      async (runtime, sessionId, notes) => {
        const submitted = await runtime.submitTurn({
          sessionId,
          input: [
            { type: 'text', text: 'Summarise the notes.' },
            { type: 'file', path: 'notes.txt' },
          ],
          delivery: 'after_turn',
        });
        // Changed, not broken: the agent reads what is there when the follow-up starts.
        await writeFile(notes, 'PLUM-43 shipped on Wednesday\n');
        return submitted;
      },
    );
    expect((await runtime.waitForRun(queued.runId)).outcome).toBe('succeeded');
    expect(inputLifecycle(await runtime.readEvents(sessionId))).toEqual([
      `run.started ${first.runId}`,
      `input.queued ${queued.runId}`,
      `run.completed ${first.runId}`,
      `input.started ${queued.runId}`,
      `run.started ${queued.runId}`,
      `run.completed ${queued.runId}`,
    ]);
    const request = turnRequests().at(-1)!.view!;
    expect(request.attachedFiles.map((file) => file.filePath)).toEqual([notes]);
    expect(request.attachedFiles[0]!.content).toContain('PLUM-43 shipped on Wednesday');
  });
});
