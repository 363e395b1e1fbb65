import { AgentError, toAgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { logBackgroundError } from './background-error-log.js';
import { recordingLogger } from '@tether/testkit';

describe("the daemon's log of failed background work", () => {
  it("names the error's code, reason and cause code, and says what to do", () => {
    const { logger, lines } = recordingLogger();
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    logBackgroundError(logger)(
      new AgentError({
        code: 'store_failure',
        message: 'The store could not look for sessions no runtime holds (ECONNREFUSED). Start the server.',
        details: { reason: 'store_unreachable' },
        cause,
      }),
    );
    expect(lines).toEqual([
      {
        level: 'error',
        fields: { errorCode: 'store_failure', reason: 'store_unreachable', cause: 'ECONNREFUSED', retryable: true },
        message: expect.stringContaining('Start the server.'),
      },
    ]);
  });

  it("gives an unexpected error's cause as a code only, never its text", () => {
    const { logger, lines } = recordingLogger();
    const cause = Object.assign(new Error('duplicate key (title)=(my secret prompt)'), { code: '23505' });
    logBackgroundError(logger)(toAgentError(cause));
    expect(lines[0]?.fields).toMatchObject({ errorCode: 'internal_error', cause: 'SQLSTATE 23505' });
    expect(JSON.stringify(lines)).not.toContain('secret prompt');
  });
});
