import { AgentError } from '@tether/protocol';
import type { AgentProviderV1 } from '@tether/provider-spec';
import { sessionNotFound as sessionNotFoundRefusal } from '../state/session-machine.js';
import type { SessionHolder } from '../store/session-coordination.js';

export function runtimeStopped(): AgentError {
  return new AgentError({
    code: 'runtime_stopped',
    message: 'This runtime has shut down. Create a new runtime to continue.',
  });
}

/** The state machine's refusal, thrown where a read or a command finds no session (one wording). */
export function sessionNotFound(): AgentError {
  return sessionNotFoundRefusal().refusal;
}

export function commandIdReused(): AgentError {
  return new AgentError({
    code: 'invalid_command',
    message: 'That commandId was already used for a different command. Use a fresh commandId for each new command.',
    details: { reason: 'command_id_reused' },
  });
}

export function unsupported(provider: AgentProviderV1, what: string, reason: string): AgentError {
  return new AgentError({
    code: 'capability_unsupported',
    message: `The ${provider.name} provider cannot ${what}.`,
    details: { reason },
  });
}

export function unknownProvider(name: string, available: readonly string[]): AgentError {
  return new AgentError({
    code: 'invalid_command',
    message: `No provider named "${name}" is configured. Available: ${available.join(', ')}.`,
    details: { reason: 'unknown_provider' },
  });
}

/** A command, or a read only its driver can answer (a diff), on a session another runtime sharing the store drives: it goes there. */
export function sessionOwnedElsewhere(holder: SessionHolder): AgentError {
  // No address: a process that serves no API (a tether run or tether acp on the store), or a daemon not advertised yet.
  const where =
    holder.address === null
      ? `the Tether process with owner id ${holder.ownerId}, which serves no API here (a tether run or tether acp on this store, or a daemon still starting)`
      : `the daemon at ${holder.address}`;
  return new AgentError({
    code: 'session_owned_elsewhere',
    message: `Another Tether process sharing this store drives this session: ${where}. Send the request there (a command with the same commandId, which is applied once; a delete or a read as it is), or retry here once that process has stopped (its lease then expires and this daemon takes the session over).`,
    details: { ownerId: holder.ownerId, ownerUrl: holder.address },
  });
}
