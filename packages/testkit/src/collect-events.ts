import type { ProtocolEvent } from '@tether/protocol';
import type { AgentRuntime } from '@tether/runtime';

/** Reads a session's events until one matches `until` (inclusive), waiting for live ones. */
export async function collectUntil(
  runtime: AgentRuntime,
  sessionId: string,
  until: (event: ProtocolEvent) => boolean,
  options: { afterSeq?: number } = {},
): Promise<ProtocolEvent[]> {
  const controller = new AbortController();
  const events: ProtocolEvent[] = [];
  try {
    for await (const event of runtime.subscribe(sessionId, {
      afterSeq: options.afterSeq ?? 0,
      signal: controller.signal,
    })) {
      events.push(event);
      if (until(event)) return events;
    }
  } finally {
    controller.abort();
  }
  return events;
}

/** All events of one run, in order, once it has completed. */
export async function runEvents(runtime: AgentRuntime, sessionId: string, runId: string): Promise<ProtocolEvent[]> {
  const events = await collectUntil(
    runtime,
    sessionId,
    (event) => event.type === 'run.completed' && event.runId === runId,
  );
  return events.filter((event) => 'runId' in event && event.runId === runId);
}

/** The main answer of a run: its message deltas outside subagents, joined. */
export function answerText(events: readonly ProtocolEvent[]): string {
  return events
    .filter(
      (event): event is Extract<ProtocolEvent, { type: 'run.message_delta' }> =>
        event.type === 'run.message_delta' && event.parentToolUseId === undefined,
    )
    .map((event) => event.text)
    .join('');
}

/** Waits for the first event of a session (from afterSeq) that matches, e.g. an interaction.requested. */
export async function waitForEvent<Type extends ProtocolEvent['type']>(
  runtime: AgentRuntime,
  sessionId: string,
  type: Type,
  options: { afterSeq?: number; where?: (event: Extract<ProtocolEvent, { type: Type }>) => boolean } = {},
): Promise<Extract<ProtocolEvent, { type: Type }>> {
  const events = await collectUntil(
    runtime,
    sessionId,
    (event) => event.type === type && (options.where?.(event as Extract<ProtocolEvent, { type: Type }>) ?? true),
    options,
  );
  return events.at(-1) as Extract<ProtocolEvent, { type: Type }>;
}

/** The session's follow-up and run lifecycle (input.*, run.started, run.completed) as "type runId" lines, in order. */
export function inputLifecycle(events: readonly ProtocolEvent[]): string[] {
  return events
    .filter(
      (event) => event.type.startsWith('input.') || event.type === 'run.started' || event.type === 'run.completed',
    )
    .map((event) => `${event.type} ${'runId' in event ? event.runId : ''}`);
}

/** Submits a text turn and waits for it; its run id. A turn that does not succeed fails the test, saying how it ended. */
export async function succeededTurn(runtime: AgentRuntime, sessionId: string, text: string): Promise<string> {
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  const run = await runtime.waitForRun(runId);
  if (run.outcome !== 'succeeded' || run.error !== null)
    throw new Error(
      `The turn "${text}" ended ${run.outcome ?? run.status} (${JSON.stringify(run.error)}), not succeeded.`,
    );
  return runId;
}
