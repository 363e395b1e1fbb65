import { RequestError } from '@agentclientprotocol/sdk';
import { type SerializedAgentError, toAgentError } from '@tether/protocol';

/** JSON-RPC's own codes for the Tether codes that mean the same thing; anything else is an internal error. */
const jsonRpcCodes: Partial<Record<SerializedAgentError['code'], number>> = {
  invalid_command: -32602,
  invalid_workspace: -32602,
  capability_unsupported: -32602,
  payload_too_large: -32602,
  session_not_found: -32002,
  auth_required: -32000,
};

/** The runtime's words name its own commands (open_session); an ACP client is told ACP's methods instead. */
const messagesForAcp: Partial<Record<SerializedAgentError['code'], string>> = {
  session_not_found:
    'No session has that id. Check the id (session/list lists them), or start a new one with session/new.',
  session_closed: 'The session is closed. Load it again (session/load) to reopen it, then send this again.',
  run_active:
    'The session is in the middle of a turn. Wait for the prompt to end, or stop it (session/cancel), then send this again.',
};

/**
 * The runtime's commands its advice names, as an editor's user reaches them: ACP has a method for
 * the model; a fork or a rewind is made with the tether command line, on the same data dir.
 */
const commandsForAcp: readonly (readonly [runtimeWords: string, acpWords: string])[] = [
  ['(rewind_session)', '(`tether rewind SESSION --to RUN` on the command line)'],
  ['(fork_session with atRunId)', '(`tether fork SESSION --at RUN` on the command line)'],
  ['(fork_session:', '(`tether fork SESSION` on the command line:'],
  ['(set_model)', '(the Model option, session/set_config_option)'],
  // A refused command's own advice: the agent makes a new commandId for every request by itself.
  [' and send it again with a new commandId.', ', then send it again.'],
];

/**
 * A Tether error as the JSON-RPC error a client receives: its message as the message, and the
 * whole error (code, message, retryable, details) as data, so a client can branch on Tether's code.
 */
export function requestErrorOf(error: SerializedAgentError): RequestError {
  const message = Object.hasOwn(messagesForAcp, error.code)
    ? messagesForAcp[error.code]!
    : commandsForAcp.reduce((text, [runtimeWords, acpWords]) => text.replaceAll(runtimeWords, acpWords), error.message);
  return new RequestError(jsonRpcCodes[error.code] ?? -32603, message, { ...error, message });
}

/** Any thrown value as the JSON-RPC error to answer with (a RequestError passes through). */
export function toRequestError(thrown: unknown): RequestError {
  if (thrown instanceof RequestError) return thrown;
  return requestErrorOf(toAgentError(thrown).toObject());
}
