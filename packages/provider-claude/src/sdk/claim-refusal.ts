import { AgentError } from '@tether/protocol';
import { refusalReason } from '../control/refusal-reason.js';

/**
 * The SDK's refusal of a claim as the cli transport reports one (spare-claim.ts reads
 * `details.reason`): the reason token the CLI (or the SDK) put before the colon, never the text.
 * `claimed` rejects with `cwd_not_found: …`, `spare_exited: …` and the like; claim() itself throws
 * without a token when the spare had already exited or was closed.
 */
export function claimRefusal(error: unknown, thrownByClaim: boolean): AgentError {
  const token = refusalReason(undefined, error instanceof Error ? error.message : '');
  return new AgentError({
    code: 'provider_execution_error',
    message: 'The claude CLI refused to claim the parked spare.',
    details: { reason: token ?? (thrownByClaim ? 'spare_exited' : 'unknown') },
  });
}
