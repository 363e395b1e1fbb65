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
  it('says it allowed the call once its answer was the one taken', async () => {
    expect(await allowOnce()).toBe('  · allowed Bash once (--approve allow-once): ls\n');
  });

  it('says another answer came first, or the prompt was over, instead of claiming the approval', async () => {
    expect(await allowOnce(settled('settled'))).toBe(
      '  · answered elsewhere first: --approve allow-once did not answer it\n',
    );
    expect(await allowOnce(settled('withdrawn'))).toBe(
      '  · no longer waiting for an answer (withdrawn, or its run ended): --approve allow-once did not answer it\n',
    );
    expect(await allowOnce(new AgentError({ code: 'session_not_found', message: 'No such session.' }))).toBe(
      'tether: the answer was not accepted: No such session. [session_not_found]\n',
    );
  });
});
