import { AgentError } from '@tether/protocol';

/** The AgentError a promise rejects with; fails the test if it resolves or rejects with something else. */
export async function agentErrorOf(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise;
  } catch (error) {
    if (AgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('Expected the promise to reject with an AgentError, but it resolved.');
}
