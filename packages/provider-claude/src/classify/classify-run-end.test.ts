import { describe, expect, it } from 'vitest';
import type { ResultFrame } from '../frames/cli-frame-schemas.js';
import { classifyRunEnd } from './classify-run-end.js';

function result(fields: Partial<ResultFrame>): ResultFrame {
  return { type: 'result', subtype: 'success', is_error: false, ...fields } as ResultFrame;
}

describe('classifyRunEnd', () => {
  it('maps a successful result to succeeded', () => {
    expect(classifyRunEnd({ kind: 'result', result: result({}) })).toEqual({ outcome: 'succeeded' });
  });

  it('maps an API error (reported as success + is_error) to provider_api_error with the status', () => {
    const classified = classifyRunEnd({
      kind: 'result',
      result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: 500 }),
    });
    expect(classified.outcome).toBe('failed');
    expect(classified.error).toMatchObject({ code: 'provider_api_error', details: { httpStatus: 500 } });
  });

  it('maps a turn the agent would not send for its size (blocking_limit, recorded) to prompt_too_long, not retryable', () => {
    // The result CLI 2.1.332 wrote for a turn of five 900,000-character text blocks, with no API call.
    const recorded = result({
      subtype: 'success',
      is_error: true,
      terminal_reason: 'blocking_limit',
      api_error_status: null,
      duration_api_ms: 0,
      num_turns: 1,
      result: 'Prompt is too long',
      stop_reason: 'stop_sequence',
    } as Partial<ResultFrame>);
    const classified = classifyRunEnd({ kind: 'result', result: recorded });
    expect(classified.error).toMatchObject({
      code: 'provider_api_error',
      retryable: false,
      details: { reason: 'prompt_too_long' },
    });
    expect(classified.error?.message).toContain('did not send it');
    // The CLI keeps the input in its conversation: a shorter next turn alone would carry it again.
    expect(classified.error?.message).toContain('rewind the session to before this run (rewind_session)');
    expect(classified.error?.message).not.toMatch(/\bRetry\b|doctor/);
  });

  it('maps a connection failure (no status) to provider_api_error without a status', () => {
    const classified = classifyRunEnd({
      kind: 'result',
      result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: null }),
    });
    expect(classified.error).toMatchObject({ code: 'provider_api_error', details: { reason: 'connection_failed' } });
  });

  it.each([
    { status: 400, fix: "session's configuration" },
    { status: 401, fix: 'ANTHROPIC_API_KEY' },
    { status: 403, fix: 'ANTHROPIC_API_KEY' },
    { status: 404, fix: "session's model name" },
    { status: 413, fix: 'smaller input' },
    { status: 422, fix: "session's configuration" },
  ])(
    'an API that refused the request itself ($status) is not retryable, and the message says what to fix',
    ({ status, fix }) => {
      const classified = classifyRunEnd({
        kind: 'result',
        result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: status }),
      });
      expect(classified.error).toMatchObject({
        code: 'provider_api_error',
        retryable: false,
        details: { httpStatus: status },
      });
      expect(classified.error?.message).toContain(fix);
      expect(classified.error?.message).not.toMatch(/\bRetry\b/);
    },
  );

  it.each([408, 429, 500, 502, 503, 529])('an API failure a retry can get past (%i) is retryable', (status) => {
    const classified = classifyRunEnd({
      kind: 'result',
      result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: status }),
    });
    expect(classified.error).toMatchObject({
      code: 'provider_api_error',
      retryable: true,
      details: { httpStatus: status },
    });
    expect(classified.error?.message).toMatch(/to try again, send a short turn such as "continue"/);
  });

  it("tells the plan limit's 429 (usage_limit_reached) from throttling: reason plan_limit, and the message says to wait for the reset", () => {
    const planLimit = classifyRunEnd({
      kind: 'result',
      result: result({
        is_error: true,
        terminal_reason: 'api_error',
        api_error_status: 429,
        api_error: 'usage_limit_reached',
      } as Partial<ResultFrame>),
    });
    expect(planLimit.error).toMatchObject({
      code: 'provider_api_error',
      retryable: true,
      details: { httpStatus: 429, reason: 'plan_limit' },
    });
    expect(planLimit.error?.message).toMatch(/plan limit is reached.*Wait until then/);
    const throttled = classifyRunEnd({
      kind: 'result',
      result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: 429 }),
    });
    expect(throttled.error?.details).toEqual({ httpStatus: 429 });
  });

  it('a lost connection is retryable; an answer cut at the output limit or refused by the model is not (the turn must change)', () => {
    const ended = { is_error: true, terminal_reason: 'api_error', api_error_status: null } as const;
    expect(classifyRunEnd({ kind: 'result', result: result(ended) }).error).toMatchObject({
      details: { reason: 'connection_failed' },
      retryable: true,
    });
    const cut = classifyRunEnd({ kind: 'result', result: result(ended), apiError: 'max_output_tokens' });
    expect(cut.error).toMatchObject({ details: { reason: 'max_output_tokens' }, retryable: false });
    const refused = classifyRunEnd({ kind: 'result', result: result({ ...ended, stop_reason: 'refusal' }) });
    expect(refused.error).toMatchObject({ details: { reason: 'refusal' }, retryable: false });
  });

  it('tells an answer cut at the output limit and a refused answer from a connection failure (the CLI gives neither a status)', () => {
    const ended = { is_error: true, terminal_reason: 'api_error', api_error_status: null } as const;
    const cut = classifyRunEnd({
      kind: 'result',
      result: result({ ...ended, stop_reason: 'stop_sequence' }),
      apiError: 'max_output_tokens',
    });
    expect(cut.error).toMatchObject({ code: 'provider_api_error', details: { reason: 'max_output_tokens' } });
    expect(cut.error?.message).toContain('CLAUDE_CODE_MAX_OUTPUT_TOKENS');
    const refused = classifyRunEnd({
      kind: 'result',
      result: result({ ...ended, stop_reason: 'refusal' }),
      apiError: 'invalid_request',
    });
    expect(refused.error).toMatchObject({ code: 'provider_api_error', details: { reason: 'refusal' } });
    expect(refused.error?.message).toContain('Rephrase the request');
  });

  it('tells "No conversation found", startup refusals and other execution errors apart', () => {
    const noConversation = classifyRunEnd({
      kind: 'result',
      result: result({
        subtype: 'error_during_execution',
        is_error: true,
        errors: ['No conversation found with session ID: x'],
      }),
    });
    expect(noConversation.error?.code).toBe('resume_not_found');
    const bypass = classifyRunEnd({
      kind: 'result',
      result: result({ subtype: 'error_during_execution', is_error: true, startup_failure_reason: 'bypass_root' }),
    });
    expect(bypass.error).toMatchObject({ code: 'provider_configuration_refused', details: { reason: 'bypass_root' } });
    expect(bypass.error?.message).toContain('IS_SANDBOX=1');
    // A reason named like an Object.prototype member is an unknown one, not its function.
    const odd = classifyRunEnd({
      kind: 'result',
      result: result({ subtype: 'error_during_execution', is_error: true, startup_failure_reason: 'constructor' }),
    });
    expect(odd.error?.message).toBe(
      "The claude CLI refused to start (constructor). Check the session's configuration and the CLI's setup.",
    );
    const other = classifyRunEnd({
      kind: 'result',
      result: result({ subtype: 'error_max_structured_output_retries', is_error: true }),
    });
    expect(other.error).toMatchObject({
      code: 'provider_execution_error',
      details: { reason: 'error_max_structured_output_retries' },
    });
  });

  it("reports the session's budgets (--max-turns, --max-budget-usd) as budget_exceeded with the budget that ran out", () => {
    const turns = classifyRunEnd({
      kind: 'result',
      result: result({ subtype: 'error_max_turns', is_error: true, terminal_reason: 'max_turns' }),
    });
    expect(turns).toMatchObject({
      outcome: 'failed',
      error: { code: 'budget_exceeded', details: { reason: 'max_turns' } },
    });
    const cost = classifyRunEnd({
      kind: 'result',
      result: result({ subtype: 'error_max_budget_usd', is_error: true, terminal_reason: 'budget_exhausted' }),
    });
    expect(cost).toMatchObject({
      outcome: 'failed',
      error: { code: 'budget_exceeded', details: { reason: 'max_cost' } },
    });
    expect(cost.error?.message).toContain('maxCostUsd');
  });

  it('reports a copy cut at an entry the transcript no longer has as resume_not_found (reason no_message), from the result or stderr', () => {
    const fromResult = classifyRunEnd({
      kind: 'result',
      result: result({
        subtype: 'error_during_execution',
        is_error: true,
        num_turns: 0,
        errors: ['No message found with message.uuid of: 0f6a3a9e-0000-4000-8000-000000000000'],
      }),
    });
    expect(fromResult.error).toMatchObject({ code: 'resume_not_found', details: { reason: 'no_message' } });
    expect(fromResult.error?.message).toContain('Fork or rewind at another run');
    const fromStderr = classifyRunEnd({
      kind: 'process_exited',
      exitCode: 1,
      signal: null,
      stderrTail: 'No message found with message.uuid of: 0f6a3a9e-0000-4000-8000-000000000000\n',
    });
    expect(fromStderr.error).toEqual(fromResult.error);
  });

  it('tells a CLI with no credentials (auth_required) from an API that refused the key (provider_api_error 401)', () => {
    const notLoggedIn = classifyRunEnd({
      kind: 'result',
      result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: null }),
      apiError: 'authentication_failed',
    });
    expect(notLoggedIn.error).toMatchObject({ code: 'auth_required' });
    const badKey = classifyRunEnd({
      kind: 'result',
      result: result({ is_error: true, terminal_reason: 'api_error', api_error_status: 401 }),
      apiError: 'authentication_failed',
    });
    expect(badKey.error).toMatchObject({ code: 'provider_api_error', details: { httpStatus: 401 } });
  });

  it("reports a conversation id already in use from the CLI's startup refusal", () => {
    const inUse = classifyRunEnd({
      kind: 'process_exited',
      exitCode: 1,
      signal: null,
      stderrTail: 'Error: Session ID 1234 is already in use.',
    });
    expect(inUse.error).toMatchObject({ code: 'session_id_in_use', details: { reason: 'session_id_in_use' } });
  });

  it('maps aborted results to interrupted', () => {
    expect(
      classifyRunEnd({
        kind: 'result',
        result: result({ subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_streaming' }),
      }).outcome,
    ).toBe('interrupted');
  });

  it('maps process endings: spawn failure, crash, clean exit without result, EOF', () => {
    expect(classifyRunEnd({ kind: 'spawn_failed', binaryPath: '/x/claude', errorCode: 'ENOENT' }).error).toMatchObject({
      code: 'provider_unavailable',
      details: { binaryPath: '/x/claude' },
    });
    expect(
      classifyRunEnd({ kind: 'process_exited', exitCode: null, signal: 'SIGKILL', stderrTail: '' }).error,
    ).toMatchObject({ code: 'provider_crashed', details: { signal: 'SIGKILL' } });
    expect(classifyRunEnd({ kind: 'process_exited', exitCode: 1, signal: null, stderrTail: 'boom' }).error?.code).toBe(
      'provider_crashed',
    );
    expect(classifyRunEnd({ kind: 'process_exited', exitCode: 0, signal: null, stderrTail: '' }).error?.code).toBe(
      'provider_contract_violation',
    );
    expect(classifyRunEnd({ kind: 'output_ended' }).error?.code).toBe('provider_contract_violation');
  });

  it('never puts raw stderr into the error', () => {
    const secret = 'sk-ant-secret-value and the prompt text';
    const classified = classifyRunEnd({ kind: 'process_exited', exitCode: 1, signal: null, stderrTail: secret });
    expect(JSON.stringify(classified)).not.toContain('sk-ant');
    const bypass = classifyRunEnd({
      kind: 'process_exited',
      exitCode: 1,
      signal: null,
      stderrTail: '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons',
    });
    expect(bypass.error).toMatchObject({ code: 'provider_configuration_refused', details: { reason: 'bypass_root' } });
  });
});
