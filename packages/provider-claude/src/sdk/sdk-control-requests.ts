import { AgentError } from '@tether/protocol';
import type { ClaudeControlRequest } from '../connection/claude-connection.js';
import type { AgentSdkQuery } from './agent-sdk-types.js';

/** The reason codes are the runtime's own for the same refusal (its commands/ modules), so a host sees one code. */
const unsupportedReasons = {
  initialize: 'initialize',
  list_models: 'model_list',
  get_context_usage: 'context_usage',
  get_session_cost: 'session_cost',
  rewind_files: 'rewind_files',
  claim_session: 'claim_session',
  get_usage: 'plan_limits',
  cancel_async_message: 'steer',
} as const;

function unsupported(request: string, subtype: keyof typeof unsupportedReasons): AgentError {
  return new AgentError({
    code: 'capability_unsupported',
    message: `The Agent SDK's query() offers no ${request}, so the sdk transport cannot make it. Use transport 'cli' where you need it.`,
    details: { reason: unsupportedReasons[subtype] },
  });
}

/**
 * setModel() resolves with nothing (the wire answer's resolved name is dropped), so the model is
 * looked up in the CLI's initialize answer, which lists what each alias resolves to.
 */
async function setModel(query: AgentSdkQuery, model: string | null): Promise<{ model?: string }> {
  await query.setModel(model ?? undefined);
  const initialization = query.initializationResult
    ? ((await query.initializationResult()) as { models?: unknown } | undefined)
    : undefined;
  const models = Array.isArray(initialization?.models)
    ? (initialization.models as { value?: unknown; resolvedModel?: unknown }[])
    : [];
  const resolved = models.find((entry) => entry?.value === (model ?? 'default'))?.resolvedModel;
  if (typeof resolved === 'string') return { model: resolved };
  return model === null ? {} : { model };
}

/** Each control request as the Query method that makes it; a missing method is capability_unsupported. */
function call(query: AgentSdkQuery, request: ClaudeControlRequest): Promise<unknown> {
  switch (request.subtype) {
    case 'initialize':
    // The SDK's supportedModels() reads the initialize answer; with it comes the agent's version.
    case 'list_models':
      if (!query.initializationResult)
        return Promise.reject(
          unsupported(request.subtype === 'initialize' ? 'initialize request' : 'model list request', request.subtype),
        );
      return query.initializationResult();
    case 'interrupt':
      // A stop means stop, as on the cli transport; an SDK that ignores cancelQueued gives the older receipt (interrupt-request.ts).
      return query.interrupt({ cancelQueued: true }).then((receipt) => receipt ?? {});
    case 'set_permission_mode':
      return query.setPermissionMode(request.mode).then((answer) => answer ?? {});
    case 'set_model':
      return setModel(query, request.model);
    case 'get_context_usage':
      if (!query.getContextUsage) return Promise.reject(unsupported('context usage request', 'get_context_usage'));
      return query.getContextUsage(request.detail ? { detail: request.detail } : undefined);
    case 'get_session_cost':
      return Promise.reject(unsupported('session cost request', 'get_session_cost'));
    case 'rewind_files':
      if (!query.rewindFiles) return Promise.reject(unsupported('file rewind request', 'rewind_files'));
      return query.rewindFiles(request.user_message_id, { dryRun: request.dry_run });
    case 'get_usage':
      if (!query.usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET)
        return Promise.reject(unsupported('plan limits request', 'get_usage'));
      return query.usage_EXPERIMENTAL_MAY_CHANGE_DO_NOT_RELY_ON_THIS_API_YET({ skipBehaviors: true });
    case 'cancel_async_message':
      if (!query.cancelAsyncMessage)
        return Promise.reject(unsupported('withdrawal of a sent message', 'cancel_async_message'));
      // The SDK resolves with the answer's `cancelled` alone.
      return query.cancelAsyncMessage(request.message_uuid).then((cancelled) => ({ cancelled: cancelled === true }));
    case 'claim_session':
      // Only a parked connection (prewarm()) is claimed, by SdkConnection itself: a running query() has nothing to claim.
      return Promise.reject(unsupported('claim of a parked spare', 'claim_session'));
  }
}

/** The SDK's rejection as the cli transport reports a refused control request: its error code only, never its text. */
function refused(error: unknown, ended: boolean): AgentError {
  if (AgentError.isInstance(error)) return error;
  if (ended)
    return new AgentError({
      code: 'provider_crashed',
      message: 'The claude CLI exited.',
      details: { reason: 'process_exited' },
    });
  const errorCode = (error as { errorCode?: unknown } | null)?.errorCode;
  const reason = typeof errorCode === 'string' && /^[a-z_]{1,60}$/.test(errorCode) ? errorCode : 'error';
  return new AgentError({
    code: 'provider_execution_error',
    message: 'The claude CLI refused the control request.',
    details: { reason },
  });
}

/** Makes a control request through the Query, bounded like the cli transport's control channel. */
export function sdkControlRequest(
  query: AgentSdkQuery,
  request: ClaudeControlRequest,
  options: { timeoutMs: number; ended: () => boolean | Promise<boolean> },
): Promise<unknown> {
  return boundedRequest(request.subtype, () => call(query, request), options);
}

/** A request the SDK makes (`make`), answered within `timeoutMs` or refused control_timeout, as on the cli transport. */
export function boundedRequest(
  subtype: ClaudeControlRequest['subtype'],
  make: () => Promise<unknown>,
  options: { timeoutMs: number; ended: () => boolean | Promise<boolean> },
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(
        new AgentError({
          code: 'provider_contract_violation',
          message: `The claude CLI did not answer the ${subtype} request within ${options.timeoutMs} ms.`,
          details: { reason: 'control_timeout' },
        }),
      );
    }, options.timeoutMs);
    timer.unref();
    // Promise-wrapped: an injected query whose method throws at once is refused the same way.
    Promise.resolve()
      .then(make)
      .then(
        (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        async (error: unknown) => {
          clearTimeout(timer);
          reject(refused(error, await options.ended()));
        },
      );
  });
}
