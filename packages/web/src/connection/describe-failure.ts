import { AgentError } from '@tether/protocol';

/** True when the daemon refused the token itself (not the Host/Origin check): ask for the token again. */
export function isTokenRefused(error: unknown): boolean {
  return AgentError.isInstance(error) && error.code === 'unauthorized' && error.details?.reason !== 'origin_refused';
}

/** A failure as one sentence for the page: the daemon's own message says what to do. */
export function describeFailure(error: unknown): string {
  if (AgentError.isInstance(error)) return error.message;
  return 'Something went wrong in the page; reload it to try again.';
}
