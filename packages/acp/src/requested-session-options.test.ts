import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { requestedSessionOptionsOf } from './requested-session-options.js';

describe("session/new's _meta as Claude's ACP adapter reads it", () => {
  it('takes the model and the turn limit from claudeCode.options', () => {
    expect(requestedSessionOptionsOf({ claudeCode: { options: { model: ' haiku ', maxTurns: 3 } } })).toEqual({
      model: 'haiku',
      maxTurns: 3,
    });
  });

  it('takes the tools run without asking, and a system prompt to append to, as acpx sends them', () => {
    expect(
      requestedSessionOptionsOf({
        claudeCode: { options: { allowedTools: ['Bash(git status)', 3, 'Read'] } },
        systemPrompt: { append: 'Answer in French.' },
      }),
    ).toEqual({ allowedTools: ['Bash(git status)', 'Read'], appendSystemPrompt: 'Answer in French.' });
    // acpx's --allowed-tools "" (nothing run without asking) is what a session does anyway.
    expect(requestedSessionOptionsOf({ claudeCode: { options: { allowedTools: [] } } })).toEqual({});
  });

  it("refuses a system prompt that would replace Claude Code's, saying how to append instead", () => {
    let refusal: unknown;
    try {
      requestedSessionOptionsOf({ systemPrompt: 'You are a pirate.' });
    } catch (error) {
      refusal = error;
    }
    expect(AgentError.isInstance(refusal)).toBe(true);
    expect(refusal).toMatchObject({
      code: 'capability_unsupported',
      details: { reason: 'system_prompt_replacement' },
      message: expect.stringContaining('--append-system-prompt'),
    });
    expect((refusal as Error).message).not.toContain('pirate');
  });

  it('ignores what is missing or of another type (open_session checks the numbers it is given)', () => {
    for (const meta of [
      undefined,
      null,
      {},
      { claudeCode: null },
      { claudeCode: { options: { model: 3, maxTurns: '3' } } },
      { claudeCode: { options: { model: ' ' } } },
      { claudeCode: { options: { allowedTools: 'Bash' } }, systemPrompt: { append: 3 } },
      { systemPrompt: '' },
    ])
      expect(requestedSessionOptionsOf(meta)).toEqual({});
  });
});
