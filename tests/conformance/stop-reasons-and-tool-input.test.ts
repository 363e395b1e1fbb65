import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { answerText, runEvents } from '@tether/testkit';
import { expect, it } from 'vitest';
import {
  bypassTurn,
  describeTransports,
  invokedToken,
  returnedToken,
  runSequence,
  turnRequests,
} from './conformance-harness.js';

describeTransports("the model's stop reason and a tool call's input", ({ start }) => {
  it('an answer cut at the output limit ends max_tokens, not as a connection failure', async () => {
    const environment = await start();
    // Every answer stops at max_tokens: the CLI asks the model to continue, then gives up.
    environment.api.setResponder(() => ({
      kind: 'message',
      content: [{ type: 'text', text: 'This essay is cut off at the output limit', chunks: 2 }],
      stopReason: 'max_tokens',
    }));
    const runtime = await environment.runtime();
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: environment.workspace } });
    const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: 'Write a long essay.' }] });
    const events = await runEvents(runtime, sessionId, runId);
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      'run.message_delta…',
      'diagnostic:warning:claude.assistant_error.max_output_tokens',
      'run.usage',
      'run.checkpointed',
      'run.completed:failed:provider_api_error:max_tokens',
    ]);
    expect(events.at(-1)).toMatchObject({
      type: 'run.completed',
      stopReason: 'max_tokens',
      error: { details: { reason: 'max_output_tokens' } },
    });
    // The model's text reaches the host; the CLI's own error wording does not.
    expect(answerText(events)).toContain('This essay is cut off at the output limit');
    expect(answerText(events)).not.toContain('API Error');
    expect(turnRequests(environment).length).toBeGreaterThan(1);
  });

  it("an Edit call's invoked event carries the file, the old text and the new text; its result the tool's text", async () => {
    const environment = await start({ sandbox: true });
    const file = path.join(environment.workspace, 'notes.txt');
    writeFileSync(file, 'hello world\n');
    environment.api.enqueue(
      // The CLI edits only a file the model has read.
      toolUseReply('Read', { file_path: file }, { text: 'Reading it first.' }),
      toolUseReply('Edit', { file_path: file, old_string: 'hello world', new_string: 'hello tether' }),
      textReply('The file now says hello tether.'),
    );
    const { runId, events } = await bypassTurn(environment, 'Change world to tether in notes.txt.');
    // The CLI adds the default replace_all to what the model sent.
    const editInput = { file_path: file, old_string: 'hello world', new_string: 'hello tether', replace_all: false };
    expect(runSequence(events, runId)).toEqual([
      'run.started',
      'run.message_delta…',
      invokedToken('Read', { file_path: file }),
      // The Read tool numbers the lines it returns.
      returnedToken('succeeded', 'Read', '1\thello world\n2\t'),
      invokedToken('Edit', editInput),
      returnedToken(
        'succeeded',
        'Edit',
        `The file ${file} has been updated successfully. (file state is current in your context — no need to Read it back)`,
      ),
      'run.message_delta…',
      'run.usage',
      'run.checkpointed',
      'run.completed:succeeded:end_turn',
    ]);
    expect(readFileSync(file, 'utf8')).toBe('hello tether\n');
  });
});
