import { AgentError } from '@tether/protocol';

/**
 * The sessions a shared store refused to write because another runtime took their leases
 * (store_failure, details.reason lease_lost); none for any other failure.
 */
export function lostSessionsOf(error: unknown): readonly string[] {
  if (!AgentError.isInstance(error) || error.code !== 'store_failure') return [];
  const details = error.details;
  if (details?.['reason'] !== 'lease_lost' || !Array.isArray(details['sessionIds'])) return [];
  return details['sessionIds'].filter((sessionId): sessionId is string => typeof sessionId === 'string');
}
