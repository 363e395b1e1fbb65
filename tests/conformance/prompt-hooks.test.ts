import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { textReply } from '@tether/fake-anthropic-api';
import { answerText, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  describeTransports,
  firstTurnOpening,
  runSequence,
  sessionSequence,
  turnRequests,
} from './conformance-harness.js';

/**
 * A policy hook in the workspace's Claude Code settings: it reads the prompt (JSON on stdin) and
 * refuses one that names the forbidden word, with its reason on stderr and exit code 2.
 */
function refuseForbiddenPrompts(workspace: string): void {
  mkdirSync(path.join(workspace, '.claude'), { recursive: true });
  const command = 'if grep -q forbidden; then echo "Prompts may not say the forbidden word." >&2; exit 2; fi';
  writeFileSync(
    path.join(workspace, '.claude', 'settings.json'),
    JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: 'command', command }] }] } }),
  );
}

describeTransports('a prompt a UserPromptSubmit hook refuses', ({ start }) => {
  it('fails the run with a typed error that names the hook and not the prompt; no model call, no checkpoint; the next prompt runs', async () => {
    const environment = await start();
    refuseForbiddenPrompts(environment.workspace);
    environment.api.enqueue(textReply('Allowed, and answered.'));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });

    const prompt = 'Please say the forbidden word, my token is sk-do-not-log.';
    const blocked = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: prompt }] });
    const blockedEvents = await runEvents(runtime, sessionId, blocked.runId);
    // The CLI ends the turn as a success with nothing in it; the host learns why it got no answer.
    expect(runSequence(blockedEvents, blocked.runId)).toEqual([
      'run.started',
      'run.completed:failed:provider_configuration_refused',
    ]);
    const error = blockedEvents.at(-1)?.type === 'run.completed' ? blockedEvents.at(-1) : undefined;
    expect(error).toMatchObject({
      error: {
        retryable: false,
        details: { reason: 'prompt_blocked_by_hook' },
        message: expect.stringContaining('UserPromptSubmit hook'),
      },
    });
    // Neither the prompt nor what the hook said of it reaches an event other than the run's input.
    const afterInput = JSON.stringify(
      (await runtime.readEvents(sessionId)).filter((event) => event.type !== 'run.started'),
    );
    expect(afterInput).not.toContain('sk-do-not-log');
    expect(afterInput).not.toContain('forbidden word');
    expect(turnRequests(environment)).toEqual([]);

    const allowed = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Say hello.' }] });
    const allowedEvents = await runEvents(runtime, sessionId, allowed.runId);
    expect(answerText(allowedEvents)).toBe('Allowed, and answered.');
    expect(await sessionSequence(runtime, sessionId)).toEqual([
      'session.opened',
      'run.started',
      ...firstTurnOpening,
      'run.completed:failed:provider_configuration_refused',
      'run.started',
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
  });
});
