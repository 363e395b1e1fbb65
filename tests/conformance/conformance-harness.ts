import type { ProtocolEvent } from '@tether/protocol';
import type { ClaudeTransport } from '@tether/provider-claude';
import type { AgentRuntime } from '@tether/runtime';
import {
  type ClaudeTestEnvironment,
  type ClaudeTestEnvironmentOptions,
  createClaudeTestEnvironment,
  runEvents,
} from '@tether/testkit';
import { afterEach, describe } from 'vitest';

/**
 * The provider conformance suite: every scenario runs once per Claude transport, against the real
 * claude binary and the fake API, and asserts the same neutral event sequence on both. Where a
 * transport cannot do something, the scenario asserts its typed refusal instead.
 */
export const transports: readonly ClaudeTransport[] = ['cli', 'sdk'];

export interface TransportContext {
  readonly transport: ClaudeTransport;
  /** A fresh environment (fake API, HOME, workspace) whose providers use this transport; cleaned up after the test. */
  start(options?: ClaudeTestEnvironmentOptions): Promise<ClaudeTestEnvironment>;
  /** The environment the current test started. */
  readonly environment: ClaudeTestEnvironment;
}

/** describe() once per transport, with an environment per test. */
export function describeTransports(name: string, body: (context: TransportContext) => void): void {
  describe.each(transports)(`${name} [%s transport]`, (transport) => {
    let current: ClaudeTestEnvironment | undefined;
    afterEach(async () => {
      await current?.cleanup();
      current = undefined;
    });
    body({
      transport,
      async start(options = {}) {
        current = await createClaudeTestEnvironment({ ...options, transport });
        return current;
      },
      get environment() {
        if (!current) throw new Error('start() the environment first');
        return current;
      },
    });
  });
}

/**
 * What a tool event carries of the call: the input as JSON, keys sorted (invoked), or the result's text as JSON
 * (succeeded / failed), each after a space; a bound that applied is named.
 */
function toolDetail(event: Extract<ProtocolEvent, { type: 'run.tool_activity' }>): string {
  if (event.inputOmitted) return ' (input omitted)';
  if (event.input) return ` ${sortedJson(event.input)}`;
  if (event.output !== undefined)
    return ` → ${JSON.stringify(event.output)}${event.outputTruncated ? ' (truncated)' : ''}`;
  return '';
}

/** The CLI's result text for a tool call the user rejected, or that a stop cut off before it ran. */
export const toolRejectedText =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/** JSON with every object's keys sorted: the CLI may reorder a tool input's fields (it adds defaults). */
function sortedJson(value: unknown): string {
  const sorted = (item: unknown): unknown => {
    if (Array.isArray(item)) return item.map(sorted);
    if (item === null || typeof item !== 'object') return item;
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, entry]) => [key, sorted(entry)]),
    );
  };
  return JSON.stringify(sorted(value));
}

/** The token of a tool call the model made with this input (run.tool_activity invoked). */
export function invokedToken(toolName: string, input: Record<string, unknown>): string {
  return `run.tool_activity:invoked:${toolName} ${sortedJson(input)}`;
}

/** The token of a tool call that returned this text (run.tool_activity succeeded / failed). */
export function returnedToken(status: 'succeeded' | 'failed', toolName: string, output: string): string {
  return `run.tool_activity:${status}:${toolName} → ${JSON.stringify(output)}`;
}

/** One event as a neutral token: its type and the fields that mean something, no ids or times. */
function token(event: ProtocolEvent): string {
  switch (event.type) {
    case 'run.started':
      return event.control ? `run.started:${event.control.name}` : 'run.started';
    case 'run.tool_activity':
      return `run.tool_activity:${event.status}:${event.toolName}${toolDetail(event)}`;
    case 'run.retrying':
      return `run.retrying:${event.httpStatus ?? 'connection'}`;
    case 'run.completed':
      return `run.completed:${event.outcome}${event.error ? `:${event.error.code}` : ''}${event.stopReason ? `:${event.stopReason}` : ''}`;
    case 'interaction.requested':
      return `interaction.requested:${event.request.kind}${event.request.kind === 'approval' ? `:${event.request.toolName}` : ''}`;
    case 'interaction.settled':
      return `interaction.settled:${event.outcome}:${event.by}`;
    case 'interaction.cancelled':
      return `interaction.cancelled:${event.reason}`;
    case 'control.completed':
      return `control.completed:${event.name}:${event.status}`;
    case 'diagnostic':
      return `diagnostic:${event.level}:${event.code}`;
    case 'session.mode_changed':
      return `session.mode_changed:${event.mode}:${event.source}`;
    case 'session.model_changed':
      return `session.model_changed:${event.model}:${event.source}`;
    case 'session.process_stopped':
      return `session.process_stopped:${event.reason}`;
    default:
      return event.type;
  }
}

/**
 * The neutral sequence of events: each as a token, consecutive deltas of one kind collapsed into
 * one `…` token (how many the CLI streamed before a stop is timing, not protocol).
 */
export function neutralSequence(events: readonly ProtocolEvent[]): string[] {
  const sequence: string[] = [];
  for (const event of events) {
    const next =
      event.type === 'run.message_delta' || event.type === 'run.thinking_delta' ? `${event.type}…` : token(event);
    if (next.endsWith('…') && sequence.at(-1) === next) continue;
    sequence.push(next);
  }
  return sequence;
}

/** The neutral sequence of everything a session recorded so far. */
export async function sessionSequence(runtime: AgentRuntime, sessionId: string): Promise<string[]> {
  return neutralSequence(withoutReports(await runtime.readEvents(sessionId)));
}

/** The neutral sequence of one run's events. */
export function runSequence(events: readonly ProtocolEvent[], runId: string): string[] {
  return neutralSequence(withoutReports(events).filter((event) => 'runId' in event && event.runId === runId));
}

/**
 * Events without the session's background reports (plan limits, the context measured after a run):
 * the agent answers those requests whenever it gets to them, so where they land among a run's
 * events is timing, not protocol. limits-and-budgets.test.ts asserts them.
 */
export function withoutReports(events: readonly ProtocolEvent[]): ProtocolEvent[] {
  return events.filter((event) => event.type !== 'session.limits_changed' && event.type !== 'session.context_measured');
}

/** One turn of a new bypass-mode session (start the environment with `sandbox: true`), followed to its end. */
export async function bypassTurn(environment: ClaudeTestEnvironment, text: string) {
  const runtime = await environment.runtime();
  const { sessionId } = await runtime.openSession({
    workspace: { kind: 'directory', path: environment.workspace },
    permissionMode: 'bypass',
  });
  const { runId } = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text }] });
  return { runtime, sessionId, runId, events: await runEvents(runtime, sessionId, runId) };
}

/** The request bodies the fake API received for model turns, in order. */
export function turnRequests(environment: ClaudeTestEnvironment) {
  return environment.api.requests.filter((request) => request.kind === 'turn');
}

/** The conversation history the model was sent in turn request `index`, as text. */
export function history(environment: ClaudeTestEnvironment, index: number): string {
  return JSON.stringify((turnRequests(environment)[index]!.body as { messages: unknown }).messages);
}

/** The first tool result the model was sent in the latest turn request. */
export function lastToolResult(environment: ClaudeTestEnvironment): { content: string; isError: boolean } {
  return turnRequests(environment).at(-1)!.view!.toolResults[0]!;
}

/** The session's opening: the agent reports its mode, model and conversation id on its first turn. */
export const firstTurnOpening = [
  'session.process_started',
  'session.mode_changed:ask_before_edit:provider',
  'session.model_changed:claude-opus-5-5:provider',
  'session.provider_session_changed',
];
