import type { SerializedAgentError } from '@tether/protocol';
import type { AgentProviderV1Part } from '@tether/provider-spec';

/** How a run's end reads while the session itself is deciding it (a stop awaiting its receipt, a failure of ours). */

function endsRun(part: AgentProviderV1Part, runId: string): boolean {
  return (part.type === 'run.completed' || part.type === 'control.completed') && part.runId === runId;
}

/** A run we are failing ends failed with our error, whatever the agent reports for it. */
export function failedEnding(
  parts: readonly AgentProviderV1Part[],
  runId: string,
  failure: SerializedAgentError,
): AgentProviderV1Part[] {
  return parts.map((part) =>
    part.type === 'run.completed' && part.runId === runId
      ? { type: 'run.completed', runId, outcome: 'failed', error: failure }
      : part,
  );
}

/** A run whose stop awaits its receipt: its ending parts wait for it, everything else goes now. */
export function holdEnding(
  parts: readonly AgentProviderV1Part[],
  runId: string,
): { readonly now: AgentProviderV1Part[]; readonly held: AgentProviderV1Part[] } {
  return {
    now: parts.filter((part) => !endsRun(part, runId)),
    held: parts.filter((part) => endsRun(part, runId)),
  };
}

/** A held ending once the receipt came: interrupted if the stop was applied, its own outcome otherwise. */
export function endingAfterReceipt(applied: boolean, held: readonly AgentProviderV1Part[]): AgentProviderV1Part[] {
  if (!applied) return [...held];
  return held.map((part) => {
    if (part.type === 'run.completed') return { type: 'run.completed', runId: part.runId, outcome: 'interrupted' };
    if (part.type === 'control.completed') return { ...part, status: 'failed' };
    return part;
  });
}
