import { AgentError, type RunOutcome, type SerializedAgentError } from '@tether/protocol';
import type { ResultFrame } from '../frames/cli-frame-schemas.js';
import { classifyStderr } from './classify-stderr.js';

/** How a run ended, as seen by a transport. Shared by every Claude transport. */
export type RunEnding =
  /**
   * apiError: the error token of the turn's synthetic API-error message, if any (e.g. authentication_failed).
   * promptBlocked: a UserPromptSubmit hook refused the turn's prompt (the CLI still reports success).
   */
  | {
      readonly kind: 'result';
      readonly result: ResultFrame;
      readonly apiError?: string | undefined;
      readonly promptBlocked?: boolean;
    }
  | { readonly kind: 'spawn_failed'; readonly binaryPath: string; readonly errorCode: string | undefined }
  | {
      readonly kind: 'process_exited';
      readonly exitCode: number | null;
      readonly signal: string | null;
      readonly stderrTail: string;
    }
  | { readonly kind: 'output_ended' }
  /** The transport's message stream threw and no process exit explains it (e.g. an SDK query that failed). */
  | { readonly kind: 'stream_failed' };

export interface RunClassification {
  readonly outcome: RunOutcome;
  readonly error?: SerializedAgentError;
}

function failed(
  code: ConstructorParameters<typeof AgentError>[0]['code'],
  message: string,
  details?: SerializedAgentError['details'],
  retryable?: boolean,
): RunClassification {
  return {
    outcome: 'failed',
    error: new AgentError({
      code,
      message,
      ...(details ? { details } : {}),
      ...(retryable === undefined ? {} : { retryable }),
    }).toObject(),
  };
}

/**
 * Whether sending the same request again can get another answer: throttling (429), a timeout (408),
 * the API's own trouble (5xx, 529 overloaded) and a lost connection (no status) can; a request the API
 * refused as such (400, 401, 403, 404, 413, 422, any other 4xx) fails the same way every time.
 */
function retryableApiStatus(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 429 || status >= 500;
}

/**
 * The claude CLI keeps a turn's input in its conversation when the model never answered it: the next
 * turn is sent with it, merged into one message. So the same text sent again is read twice, and an
 * input the API refuses is refused again with every later turn until the conversation is rewound.
 */
const sendContinue = `The turn's input stays in the agent's conversation: to try again, send a short turn such as "continue" (the same text again would be read twice).`;
const rewindRefusedInput = `The turn's input stays in the agent's conversation, and every later turn would send it again: rewind the session to before this run (rewind_session), then send the turn corrected.`;
const onceFixed = `Once fixed, send a short turn such as "continue": the turn's input stays in the agent's conversation.`;

/** What to fix for a status the API will answer again however often the request is retried. */
const refusedRequestHints: Record<number, string> = {
  400: `The API refused the request as invalid: check the session's configuration (model, effort, token limits) and the turn's input (images, files). ${rewindRefusedInput}`,
  401: `The API refused the credentials: check ANTHROPIC_API_KEY (or your claude login) and ANTHROPIC_BASE_URL. ${onceFixed}`,
  403: `The API key may not do this: check that ANTHROPIC_API_KEY (or your claude login) has access to the model, and ANTHROPIC_BASE_URL. ${onceFixed}`,
  404: `The API knows no such model or endpoint: check the session's model name (set_model) and ANTHROPIC_BASE_URL. ${onceFixed}`,
  413: `The request is larger than the API accepts. ${rewindRefusedInput} Send smaller input (fewer or smaller images and files), or compact the conversation first.`,
};

/**
 * A model API failure after the CLI's own retries: `retryable` only where a retry can help
 * (retryableApiStatus), and the message says what to fix where it cannot.
 */
function apiFailure(status: number | undefined): RunClassification {
  if (status === undefined) {
    return failed(
      'provider_api_error',
      `The model API could not be reached or failed mid-answer. If it persists, check the network, the API status and ANTHROPIC_BASE_URL. ${sendContinue}`,
      { reason: 'connection_failed' },
      true,
    );
  }
  const retryable = retryableApiStatus(status);
  const hint = retryable
    ? status === 429 || status === 529
      ? `The API is rate limiting or overloaded; retry later. ${sendContinue}`
      : `If it persists, check the API status and ANTHROPIC_BASE_URL. ${sendContinue}`
    : (refusedRequestHints[status] ??
      `The API refused the request: check the session's configuration (model, ANTHROPIC_BASE_URL) and the turn's input; sending the same request again fails the same way. ${rewindRefusedInput}`);
  return failed(
    'provider_api_error',
    `The model API answered HTTP ${status}. ${hint}`,
    { httpStatus: status },
    retryable,
  );
}

const promptTooLongMessages = {
  compaction_failed:
    "The conversation no longer fits the model's context window, and the agent's automatic compaction could not shrink it enough. Fork the session at an earlier run (fork_session with atRunId) or rewind it to before this run (rewind_session), or open a new session; attach fewer or smaller files and images.",
  not_sent:
    "The turn does not fit the model's context window with the conversation before it, so the agent did not send it (no model call was made). Its input stays in the agent's conversation all the same, and the next turn would carry it: rewind the session to before this run (rewind_session), then send it shorter, with fewer or smaller files and images; or fork the session at an earlier run (fork_session with atRunId), or open a new session.",
} as const;

function promptTooLong(status: number | undefined, why: keyof typeof promptTooLongMessages): RunClassification {
  return failed(
    'provider_api_error',
    promptTooLongMessages[why],
    { ...(status === undefined ? {} : { httpStatus: status }), reason: 'prompt_too_long' },
    // The same conversation is as long the next time.
    false,
  );
}

const startupFailureMessages: Record<string, string> = {
  bypass_root:
    'The claude CLI refuses bypass permission mode when running as root unless IS_SANDBOX=1 is set in its environment. Set IS_SANDBOX=1 (only inside a sandbox) or choose another permission mode.',
  cwd_unavailable: 'The claude CLI could not use the workspace directory. Check that it exists and is readable.',
  config_file_invalid:
    'The claude CLI could not read its configuration file (~/.claude.json). Repair or remove it, then retry.',
  shell_tool_missing: 'The claude CLI found no usable shell for its Bash tool. Install bash or set SHELL.',
};

/** A file the session's configuration names that the claude CLI refused at launch (it exits at once, saying so on stderr). */
const launchFileRefusals: Record<string, string> = {
  mcp_config_invalid:
    "The claude CLI refused the session's MCP configuration (mcpConfigPath): the file is missing, or is not a valid MCP configuration. Fix the file (the next turn starts the agent again), or open a session without it.",
  settings_file_missing:
    "The claude CLI did not find the session's settings file (settingsPath). Put the file back (the next turn starts the agent again), or open a session without it.",
};

/**
 * Claude Code keeps each conversation's transcript under its config dir (`$CLAUDE_CONFIG_DIR`, default
 * `~/.claude`), in `projects/<workspace path>/`: a session whose turns ran on another machine (several
 * daemons sharing a store) can only resume where that folder is shared and the workspace path is the same.
 */
const conversationGoneMessage =
  "The conversation to resume is not in this machine's Claude Code transcripts (it was deleted, the session was ephemeral, or its earlier turns ran on another machine). Daemons sharing a store must share the claude config dir's projects folder ($CLAUDE_CONFIG_DIR, default ~/.claude, e.g. a shared volume) and run sessions in identical workspace paths (docs/store-postgres.md). Otherwise open a new session.";

/** A copy of a conversation (fork, rewind) cut at a transcript entry the agent no longer has. */
const copyPointGone = failed(
  'resume_not_found',
  "The point this conversation was to be copied from is no longer in the agent's transcript (it was deleted, or that conversation was changed outside Tether). Fork or rewind at another run, or open a new session.",
  { reason: 'no_message' },
);

/** The session's budgets (--max-turns, --max-budget-usd) as the CLI ends a run that passes them. */
const budgetReasons: Record<string, { reason: string; message: string }> = {
  error_max_turns: {
    reason: 'max_turns',
    message:
      "The run took as many model round trips as the session's maxTurns allows, so the claude CLI stopped it. Continue with a new turn, or raise maxTurns.",
  },
  error_max_budget_usd: {
    reason: 'max_cost',
    message:
      "The session's cost reached its maxCostUsd budget, so the claude CLI stopped the run. A session's budget cannot be raised: to go on, fork it (fork_session: its conversation continues in a new session with a budget of its own), or open a new session.",
  },
};

/**
 * The CLI's refusal of its launch configuration (a result with `startup_failure_reason`, e.g. bypass as
 * root): the process exits right after it. Undefined for any other result.
 */
export function startupRefusal(result: ResultFrame): SerializedAgentError | undefined {
  const startupReason = result.startup_failure_reason ?? undefined;
  if (startupReason === undefined) return undefined;
  const reason = /^[a-z_]{1,60}$/.test(startupReason) ? startupReason : 'unknown';
  return new AgentError({
    code: 'provider_configuration_refused',
    message:
      // Own keys only: "constructor" would find Object.prototype's.
      (Object.hasOwn(startupFailureMessages, reason) ? startupFailureMessages[reason] : undefined) ??
      `The claude CLI refused to start (${reason}). Check the session's configuration and the CLI's setup.`,
    details: { reason },
  }).toObject();
}

/**
 * A UserPromptSubmit hook (the workspace's or the user's Claude Code settings) refused the prompt. The
 * CLI ends such a turn as a success with no model call; sent again, the prompt is refused again. The
 * hook's reason is left out: a hook may quote the prompt, which the session may keep out of its log.
 */
const promptBlockedByHook = failed(
  'provider_configuration_refused',
  "A UserPromptSubmit hook in the agent's Claude Code settings (the workspace's .claude/settings.json or settings.local.json, or the user's ~/.claude/settings.json) refused the prompt, so the model was not asked. Change the prompt to satisfy the hook, or change the hook.",
  { reason: 'prompt_blocked_by_hook' },
  false,
);

function classifyResult(result: ResultFrame, apiError: string | undefined, promptBlocked: boolean): RunClassification {
  if (promptBlocked) return promptBlockedByHook;
  if (result.subtype === 'success' && result.is_error !== true) return { outcome: 'succeeded' };
  const terminalReason = result.terminal_reason ?? undefined;
  if (terminalReason === 'aborted_streaming' || terminalReason === 'aborted_tools') {
    return { outcome: 'interrupted' };
  }
  // No credentials at all ("Not logged in"): the CLI ends at once, with no HTTP status.
  if (apiError === 'authentication_failed' && (result.api_error_status ?? null) === null) {
    return failed(
      'auth_required',
      'The claude CLI has no credentials. Set ANTHROPIC_API_KEY, or run `claude` once in a terminal to log in, then retry.',
      { reason: 'not_logged_in' },
    );
  }
  // The model answered, but not usefully: the CLI ends these as API errors with no HTTP status.
  if (apiError === 'max_output_tokens') {
    return failed(
      'provider_api_error',
      "The model's answer reached its output token limit, again after the claude CLI asked it to continue. Ask for a shorter answer or smaller steps, or raise CLAUDE_CODE_MAX_OUTPUT_TOKENS.",
      { reason: 'max_output_tokens' },
      // The same turn asks for the same long answer: the turn has to change.
      false,
    );
  }
  if (result.stop_reason === 'refusal') {
    return failed(
      'provider_api_error',
      'The model declined to answer (its safeguards stopped the response). Rephrase the request, or continue in a new session or with another model.',
      { reason: 'refusal' },
      false,
    );
  }
  // A subscription's plan limit window is closed (CLI 2.1.332: api_error usage_limit_reached, after a
  // rate_limit_event rejected that names the reset, which the runtime adds to this message).
  if (result.api_error_status === 429 && result.api_error === 'usage_limit_reached') {
    return failed(
      'provider_api_error',
      "The account's plan limit is reached: the model API refuses turns until its window resets (session.limits_changed names the reset when the agent reported one). Wait until then, then send a short turn such as \"continue\": the turn's input stays in the agent's conversation. Withdraw queued follow-ups that should not run.",
      { httpStatus: 429, reason: 'plan_limit' },
      true,
    );
  }
  // The conversation outgrew the model's context and the agent's own compaction could not shrink it
  // (CLI 2.1.332: "Prompt is too long", an HTTP 400, terminal_reason prompt_too_long).
  if (terminalReason === 'prompt_too_long')
    return promptTooLong(result.api_error_status ?? undefined, 'compaction_failed');
  // The agent itself refused to send a turn whose input with the conversation exceeds the context
  // window (CLI 2.1.332: terminal_reason blocking_limit, "Prompt is too long", no API call; a turn of
  // five 900,000-character text blocks). It still records the input in its transcript, and sends it
  // with the next turn.
  if (terminalReason === 'blocking_limit') return promptTooLong(undefined, 'not_sent');
  if (terminalReason === 'api_error' || (result.api_error_status !== undefined && result.api_error_status !== null)) {
    return apiFailure(result.api_error_status ?? undefined);
  }
  const budget = budgetReasons[result.subtype];
  if (budget) return failed('budget_exceeded', budget.message, { reason: budget.reason });
  const refusal = startupRefusal(result);
  if (refusal) return { outcome: 'failed', error: refusal };
  if ((result.errors ?? []).some((error) => error.startsWith('No conversation found'))) {
    return failed('resume_not_found', conversationGoneMessage, { reason: 'no_conversation' });
  }
  if ((result.errors ?? []).some((error) => error.startsWith('No message found with message.uuid')))
    return copyPointGone;
  const reason = /^[a-z_]{1,60}$/.test(result.subtype) ? result.subtype : 'unknown';
  return failed(
    'provider_execution_error',
    'The claude CLI ended the turn with an error. Retry the turn; if it keeps failing, check the CLI with `tether doctor`.',
    { reason },
  );
}

/**
 * The one mapping from how a run ended to its outcome and error code: spawn failure →
 * provider_unavailable; signal or non-zero exit before a result → provider_crashed; exit 0 or
 * EOF with no result → provider_contract_violation; API error result → provider_api_error with
 * the HTTP status; "No conversation found" or a copy's missing cut point → resume_not_found; other execution errors →
 * provider_execution_error; a transport's stream that threw with no process exit to explain it →
 * provider_unavailable.
 */
/**
 * Why the claude CLI could not be started. E2BIG is the kernel refusing the launch's environment and
 * arguments together (over its limit), not a missing binary, so it gets its own advice.
 */
export function spawnFailedError(binaryPath: string, errorCode: string | undefined): AgentError {
  const message =
    errorCode === 'E2BIG'
      ? `Could not start the claude CLI at ${binaryPath} (E2BIG): its environment and arguments are larger than the system allows (a single variable may hold at most 128 KiB). Remove large variables from the environment Tether runs in, or shrink the session's configuration.`
      : `Could not start the claude CLI at ${binaryPath}${errorCode ? ` (${errorCode})` : ''}. Install Claude Code or point TETHER_CLAUDE_PATH (or --claude-path) at a working binary.`;
  return new AgentError({
    code: 'provider_unavailable',
    message,
    details: { binaryPath, reason: 'spawn_failed', ...(errorCode ? { systemErrorCode: errorCode } : {}) },
  });
}

export function classifyRunEnd(ending: RunEnding): RunClassification {
  switch (ending.kind) {
    case 'result':
      return classifyResult(ending.result, ending.apiError, ending.promptBlocked === true);
    case 'spawn_failed':
      return { outcome: 'failed', error: spawnFailedError(ending.binaryPath, ending.errorCode).toObject() };
    case 'process_exited': {
      const stderr = classifyStderr(ending.stderrTail);
      if (stderr === 'bypass_root') {
        return failed('provider_configuration_refused', startupFailureMessages.bypass_root!, {
          reason: stderr,
          exitCode: ending.exitCode,
          signal: ending.signal,
        });
      }
      if (stderr !== undefined && Object.hasOwn(launchFileRefusals, stderr)) {
        // The same file refuses every launch: retrying the turn cannot help until it is fixed.
        return failed('provider_configuration_refused', launchFileRefusals[stderr]!, { reason: stderr }, false);
      }
      if (stderr === 'no_conversation') {
        return failed('resume_not_found', conversationGoneMessage, { reason: stderr });
      }
      if (stderr === 'no_message') return copyPointGone;
      if (stderr === 'session_id_in_use') {
        return failed(
          'session_id_in_use',
          'The claude CLI refused the conversation id because another conversation already uses it. Open a new session.',
          { reason: stderr },
        );
      }
      if (ending.signal !== null || (ending.exitCode !== null && ending.exitCode !== 0)) {
        return failed(
          'provider_crashed',
          `The claude CLI exited before finishing the turn (${ending.signal !== null ? `signal ${ending.signal}` : `exit code ${ending.exitCode}`}). The next turn starts a new process that resumes the conversation.`,
          { exitCode: ending.exitCode, signal: ending.signal, ...(stderr ? { reason: stderr } : {}) },
        );
      }
      return failed(
        'provider_contract_violation',
        "The claude CLI exited without reporting the turn's result. Retry the turn; if it repeats, check the CLI version with `tether doctor`.",
        { exitCode: ending.exitCode, reason: 'exit_without_result' },
      );
    }
    case 'output_ended':
      return failed(
        'provider_contract_violation',
        "The claude CLI closed its output without reporting the turn's result. Retry the turn; if it repeats, check the CLI version with `tether doctor`.",
        { reason: 'output_ended_without_result' },
      );
    case 'stream_failed':
      return failed(
        'provider_unavailable',
        "The agent stopped delivering output with an error before the turn's result. Retry the turn; if it repeats, check the Claude Agent SDK and the claude CLI with `tether doctor`.",
        { reason: 'stream_failed' },
      );
  }
}

/**
 * Bypass mode as the claude CLI would refuse it: running as root without IS_SANDBOX=1 in the agent's
 * environment (CLI 2.1.332 takes no other value). Known before the agent starts, so a session or a
 * mode change that asks for it is refused at once, nothing changed, rather than every later turn
 * failing. Null when the CLI would take it.
 */
export function bypassRefusal(environment: Readonly<Record<string, string | undefined>>): AgentError | null {
  if (process.getuid?.() !== 0 || environment.IS_SANDBOX === '1') return null;
  return new AgentError({
    code: 'provider_configuration_refused',
    message: startupFailureMessages.bypass_root!,
    details: { reason: 'bypass_root' },
  });
}
