import { AgentError, type EventOfType } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import type { TetherBackend } from '../tether-backend.js';
import { InteractionResponder } from './interaction-responder.js';

const sessionId = `ses_${'a'.repeat(32)}`;
const approval: EventOfType<'interaction.requested'> = {
  type: 'interaction.requested',
  sessionId,
  seq: 3,
  at: '2026-12-01T10:00:00.000Z',
  runId: `run_${'b'.repeat(32)}`,
  interactionRef: 'int_1',
  request: {
    kind: 'approval',
    toolName: 'Bash',
    toolUseId: 'toolu_1',
    category: 'command',
    input: { command: 'ls' },
    offerSessionApproval: true,
    defaultToNo: false,
  },
};

/** An --approve allow-once responder whose answer the daemon takes, or refuses as `refusal` says. */
async function allowOnce(refusal?: AgentError): Promise<string> {
  let stderr = '';
  let answered: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    answered = resolve;
  });
  const runtime = {
    respondInteraction: async () => {
      // The line is written after the answer settles: let the responder write it first.
      setImmediate(answered);
      if (refusal) throw refusal;
      return {};
    },
  } as unknown as TetherBackend;
  const responder = new InteractionResponder({
    runtime,
    sessionId,
    mode: { kind: 'allow-once' },
    stderr: { write: (text: string) => (stderr += text) },
  });
  responder.onRequested(approval);
  await done;
  return stderr;
}

const settled = (reason: string) =>
  new AgentError({ code: 'interaction_already_settled', message: 'already', details: { reason } });

describe('--approve allow-once', () => {
  it('says what it answers as it sends it', async () => {
    expect(await allowOnce()).toBe('  · allowing Bash once (--approve allow-once): ls\n');
  });

  it("says when another answer, or the prompt's end, came first: the answer given here did not count", async () => {
    const allowing = '  · allowing Bash once (--approve allow-once): ls\n';
    for (const status of ['approved', 'denied', 'resolving'])
      expect(await allowOnce(settled(status))).toBe(
        `${allowing}  · answered elsewhere first: the answer given here did not count\n`,
      );
    expect(await allowOnce(settled('withdrawn'))).toBe(
      `${allowing}  · the agent withdrew the prompt first: the answer given here did not count\n`,
    );
    expect(await allowOnce(settled('cancelled'))).toBe(
      `${allowing}  · the prompt ended with its run first: the answer given here did not count\n`,
    );
    expect(await allowOnce(new AgentError({ code: 'session_not_found', message: 'No such session.' }))).toBe(
      `${allowing}tether: the answer was not accepted: No such session. [session_not_found]\n`,
    );
  });
});
