import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { textReply, toolUseReply } from '@tether/fake-anthropic-api';
import type { ProtocolEvent } from '@tether/protocol';
import { agentErrorOf, processesWithEnvironment, runEvents, succeededTurn, waitForEvent } from '@tether/testkit';
import { expect, it } from 'vitest';
import { describeTransports, history, turnRequests } from './conformance-harness.js';

function processesStarted(events: readonly ProtocolEvent[]): number {
  return events.filter((event) => event.type === 'session.process_started').length;
}

/**
 * A file rewind asked while the session has no agent: refused at once when the agent that would be
 * started holds no checkpoint of the run (the conversation holds no turn yet, or a rewind took the run
 * out of it), else asked of an agent started as the next turn would start it (resuming the conversation).
 */
describeTransports('a file rewind asked with no agent running', ({ start }) => {
  async function open(provider: { idleReleaseMs?: number } = {}, configuration: { permissionMode?: 'auto_edit' } = {}) {
    const environment = await start();
    environment.api.setResponder(() => textReply('Noted.'));
    const runtime = await environment.runtime({ provider });
    const { sessionId } = await runtime.openSession({
      workspace: { kind: 'directory', path: environment.workspace },
      ...configuration,
    });
    const turn = (text: string) => succeededTurn(runtime, sessionId, text);
    return { environment, runtime, sessionId, turn };
  }

  it('rewound to before its first turn, the conversation holds none: refused no_checkpoint without starting an agent', async () => {
    const { environment, runtime, sessionId, turn } = await open();
    const first = await turn('Prompt one.');
    // The rewind lets the agent go; the next turn would start a new conversation.
    await runtime.rewindSession({ sessionId, toRunId: first });
    const before = processesStarted(await runtime.readEvents(sessionId));
    const refused = await agentErrorOf(runtime.rewindSession({ sessionId, toRunId: first, files: true }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(refused.message).toMatch(/Rewind without files, or to another run\.$/);
    expect(processesStarted(await runtime.readEvents(sessionId))).toBe(before);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    // The session goes on as before: the next turn starts the new conversation.
    await turn('Prompt two.');
    expect(history(environment, turnRequests(environment).length - 1)).not.toContain('Prompt one.');
  });

  it('let go when idle, a run a rewind took out (on another branch now) is refused no_checkpoint without starting an agent', async () => {
    const { environment, runtime, sessionId, turn } = await open({ idleReleaseMs: 1 });
    await turn('Prompt one.');
    const second = await turn('Prompt two.');
    // Turn two is taken out; turn three continues the conversation after turn one, in a copy of it.
    await runtime.rewindSession({ sessionId, toRunId: second });
    const third = await turn('Prompt three.');
    const thirdCompleted = (await runEvents(runtime, sessionId, third)).at(-1)!;
    await waitForEvent(runtime, sessionId, 'session.process_stopped', {
      afterSeq: thirdCompleted.seq,
      where: (event) => event.reason === 'idle',
    });
    const events = await runtime.readEvents(sessionId);
    const refused = await agentErrorOf(runtime.rewindSession({ sessionId, toRunId: second, files: true }));
    expect(refused).toMatchObject({ code: 'checkpoint_unavailable', details: { reason: 'no_checkpoint' } });
    expect(refused.message).toMatch(/Rewind without files, or to another run\.$/);
    // Nothing was started to ask, and nothing was recorded.
    expect(await runtime.readEvents(sessionId)).toEqual(events);
    expect(processesWithEnvironment('HOME', environment.home)).toEqual([]);
    // The next turn resumes the conversation as it stands.
    await turn('Prompt four.');
    const resumed = history(environment, turnRequests(environment).length - 1);
    expect(resumed).toContain('Prompt three.');
    expect(resumed).not.toContain('Prompt two.');
  });

  it('rewound to a run without files, then with them: asked of the agent started from the copy, which puts them back', async () => {
    const { environment, runtime, sessionId, turn } = await open({}, { permissionMode: 'auto_edit' });
    const edited = path.join(environment.workspace, 'edited.txt');
    writeFileSync(edited, 'version zero');
    environment.api.enqueue(
      toolUseReply('Write', { file_path: edited, content: 'version one' }),
      textReply('Wrote one.'),
      toolUseReply('Write', { file_path: edited, content: 'version two' }),
      textReply('Wrote two.'),
    );
    await turn('Prompt one.');
    const second = await turn('Prompt two.');
    await runtime.rewindSession({ sessionId, toRunId: second });
    expect(readFileSync(edited, 'utf8')).toBe('version two');
    // Turn two is out of the conversation, but the copy the next agent starts from still has its checkpoint.
    const before = processesStarted(await runtime.readEvents(sessionId));
    const receipt = await runtime.rewindSession({ sessionId, toRunId: second, files: true });
    expect(receipt.files).toMatchObject({ paths: [edited] });
    expect(readFileSync(edited, 'utf8')).toBe('version one');
    expect(processesStarted(await runtime.readEvents(sessionId))).toBe(before + 1);
  });
});
