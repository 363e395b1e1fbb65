import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { requestErrorOf } from './acp-errors.js';

describe('requestErrorOf', () => {
  it("names what an editor's user can do instead of the runtime's commands, in the message and the data", () => {
    const error = new AgentError({
      code: 'provider_api_error',
      message:
        'Fork the session at an earlier run (fork_session with atRunId) or rewind it to before this run (rewind_session); check the model (set_model).',
      details: { reason: 'prompt_too_long' },
    }).toObject();
    const refused = requestErrorOf(error);
    const expected =
      'Fork the session at an earlier run (`tether fork SESSION --at RUN` on the command line) or rewind it to before this run (`tether rewind SESSION --to RUN` on the command line); check the model (the Model option, session/set_config_option).';
    expect(refused.code).toBe(-32603);
    expect(refused.message).toBe(expected);
    expect(refused.data).toMatchObject({ code: 'provider_api_error', message: expected });
  });

  it('drops the advice to send a refused command with a new commandId, which ACP clients never make', () => {
    const error = new AgentError({
      code: 'invalid_command',
      message: 'The command is not valid (model: Too big). Fix those fields and send it again with a new commandId.',
    }).toObject();
    const refused = requestErrorOf(error);
    expect(refused.code).toBe(-32602);
    expect(refused.message).toBe('The command is not valid (model: Too big). Fix those fields, then send it again.');
  });
});
