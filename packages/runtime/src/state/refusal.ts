import type { AgentError } from '@tether/protocol';

/** A command the state does not allow, and the error that says so; nothing was decided, nothing changes. */
export interface Refusal {
  readonly refusal: AgentError;
}

/** What a decider makes of a command: what it accepted (the events to record and what else it decided), or its refusal. */
export type Decided<Accepted> = Accepted | Refusal;

export function isRefusal<Accepted extends object>(decided: Decided<Accepted>): decided is Refusal {
  return 'refusal' in decided;
}
