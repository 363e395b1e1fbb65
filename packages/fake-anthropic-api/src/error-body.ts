/** Anthropic error bodies and the default error type for each status. */

const DEFAULT_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

const DEFAULT_MESSAGES: Record<string, string> = {
  invalid_request_error: 'Invalid request (fake api)',
  authentication_error: 'invalid x-api-key (fake api)',
  permission_error: 'Permission denied (fake api)',
  not_found_error: 'Not found (fake api)',
  request_too_large: 'Request too large (fake api)',
  rate_limit_error: 'Rate limited (fake api)',
  api_error: 'Internal server error (fake api)',
  overloaded_error: 'Overloaded (fake api)',
};

export function defaultErrorType(status: number): string {
  return DEFAULT_ERROR_TYPES[status] ?? 'api_error';
}

export function defaultErrorMessage(errorType: string): string {
  return DEFAULT_MESSAGES[errorType] ?? `${errorType} (fake api)`;
}

/** The status the API uses for an error type (for mid-stream error types answered as HTTP errors). */
export function statusForErrorType(errorType: string): number {
  for (const [status, type] of Object.entries(DEFAULT_ERROR_TYPES)) if (type === errorType) return Number(status);
  return 500;
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string;
}

export function errorBody(errorType: string, message: string, requestId: string): AnthropicErrorBody {
  return { type: 'error', error: { type: errorType, message }, request_id: requestId };
}
