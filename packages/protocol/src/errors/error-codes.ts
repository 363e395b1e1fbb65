/**
 * Every error code Tether reports, mapped once to an HTTP status (for the daemon), a process exit
 * code (for the `tether` command) and whether retrying the same request can succeed.
 */
export const errorCodeTable = {
  invalid_command: { httpStatus: 400, exitCode: 2, retryable: false },
  invalid_workspace: { httpStatus: 400, exitCode: 2, retryable: false },
  /** delete of a session whose worktree holds work, without discardWorkspaceChanges. */
  workspace_has_changes: { httpStatus: 409, exitCode: 1, retryable: false },
  capability_unsupported: { httpStatus: 501, exitCode: 2, retryable: false },
  session_not_found: { httpStatus: 404, exitCode: 1, retryable: false },
  session_closed: { httpStatus: 409, exitCode: 1, retryable: false },
  session_open: { httpStatus: 409, exitCode: 1, retryable: false },
  route_not_found: { httpStatus: 404, exitCode: 1, retryable: false },
  /** A route that exists, asked with a method it does not answer (the HTTP answer's Allow header lists those it does). */
  method_not_allowed: { httpStatus: 405, exitCode: 1, retryable: false },
  blob_not_found: { httpStatus: 404, exitCode: 1, retryable: false },
  unauthorized: { httpStatus: 401, exitCode: 1, retryable: false },
  run_active: { httpStatus: 409, exitCode: 1, retryable: true },
  run_not_found: { httpStatus: 404, exitCode: 1, retryable: false },
  unknown_interaction: { httpStatus: 404, exitCode: 1, retryable: false },
  interaction_already_settled: { httpStatus: 409, exitCode: 1, retryable: false },
  /** A one-time link of a notification that was used, expired, or whose interaction ended (docs/notifications.md). */
  link_unavailable: { httpStatus: 410, exitCode: 1, retryable: false },
  requires_restart: { httpStatus: 409, exitCode: 1, retryable: false },
  /** fork_session / rewind_session at a point the agent kept nothing for (details.reason says which). */
  checkpoint_unavailable: { httpStatus: 409, exitCode: 1, retryable: false },
  data_dir_in_use: { httpStatus: 423, exitCode: 1, retryable: true },
  data_dir_unsafe: { httpStatus: 500, exitCode: 1, retryable: false },
  store_failure: { httpStatus: 500, exitCode: 1, retryable: true },
  provider_unavailable: { httpStatus: 503, exitCode: 1, retryable: true },
  provider_configuration_refused: { httpStatus: 422, exitCode: 1, retryable: false },
  provider_crashed: { httpStatus: 502, exitCode: 1, retryable: true },
  provider_contract_violation: { httpStatus: 502, exitCode: 1, retryable: true },
  provider_api_error: { httpStatus: 502, exitCode: 1, retryable: true },
  provider_execution_error: { httpStatus: 500, exitCode: 1, retryable: true },
  provider_rejected: { httpStatus: 409, exitCode: 1, retryable: true },
  provider_stalled: { httpStatus: 504, exitCode: 1, retryable: true },
  auth_required: { httpStatus: 401, exitCode: 1, retryable: false },
  session_id_in_use: { httpStatus: 409, exitCode: 1, retryable: false },
  session_owned_elsewhere: { httpStatus: 409, exitCode: 1, retryable: true },
  input_not_queued: { httpStatus: 409, exitCode: 1, retryable: false },
  budget_exceeded: { httpStatus: 409, exitCode: 1, retryable: false },
  capacity_exceeded: { httpStatus: 429, exitCode: 1, retryable: true },
  payload_too_large: { httpStatus: 413, exitCode: 2, retryable: false },
  resume_not_found: { httpStatus: 404, exitCode: 1, retryable: false },
  runtime_restarted: { httpStatus: 500, exitCode: 1, retryable: true },
  runtime_stopped: { httpStatus: 503, exitCode: 1, retryable: true },
  internal_error: { httpStatus: 500, exitCode: 1, retryable: false },
} as const satisfies Record<string, { httpStatus: number; exitCode: number; retryable: boolean }>;

export type ErrorCode = keyof typeof errorCodeTable;

export const errorCodes = Object.keys(errorCodeTable) as [ErrorCode, ...ErrorCode[]];

export function httpStatusForCode(code: ErrorCode): number {
  return errorCodeTable[code].httpStatus;
}

export function exitCodeForCode(code: ErrorCode): number {
  return errorCodeTable[code].exitCode;
}
