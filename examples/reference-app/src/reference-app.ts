/**
 * A complete Tether host, meant to be copied: create the runtime, open a session in a
 * workspace, subscribe to its events, submit a turn, tell the receipt from the completion,
 * print usage, then close the session and shut down cleanly.
 */
import { AgentError, type ProtocolEvent, type RunSnapshot } from '@tether/protocol';
import { type ClaudeProviderSettings, createClaudeProvider } from '@tether/provider-claude';
import { createAgentRuntime } from '@tether/runtime';
import { openSqliteStore, resolveDataDir } from '@tether/store-sqlite';

export interface ReferenceAppOptions {
  /** The directory the agent works in (absolute). */
  readonly workspace: string;
  readonly prompt: string;
  /** Where Tether keeps sessions; default $TETHER_HOME or ~/.tether. */
  readonly dataDir?: string;
  /** How to find and start claude (binary path, environment); defaults are fine on a developer machine. */
  readonly provider?: ClaudeProviderSettings;
  /** Where to print; default stdout. */
  readonly print?: (line: string) => void;
}

export interface ReferenceAppResult {
  readonly sessionId: string;
  readonly run: RunSnapshot;
  readonly answer: string;
  readonly eventTypes: readonly ProtocolEvent['type'][];
}

export async function runReferenceApp(options: ReferenceAppOptions): Promise<ReferenceAppResult> {
  const print = options.print ?? ((line: string) => console.log(line));

  // 1. The runtime: one provider, one durable store. The runtime owns the store from here on.
  const store = await openSqliteStore({ dataDir: resolveDataDir({ dataDir: options.dataDir }) });
  const runtime = await createAgentRuntime({ providers: [createClaudeProvider(options.provider)], store });

  try {
    // 2. A session in a workspace. Nothing is spawned yet: the claude process starts with the first turn.
    const { sessionId } = await runtime.openSession({ workspace: { kind: 'directory', path: options.workspace } });
    print(`session ${sessionId} opened`);

    // 3. Subscribe before submitting, from the start of the log, so no event can be missed.
    //    (After a reconnect, pass the last seq you saw as afterSeq instead of 0.)
    const controller = new AbortController();
    const eventTypes: ProtocolEvent['type'][] = [];
    let answer = '';
    const following = (async () => {
      for await (const event of runtime.subscribe(sessionId, { afterSeq: 0, signal: controller.signal })) {
        eventTypes.push(event.type);
        if (event.type === 'run.message_delta' && event.parentToolUseId === undefined) answer += event.text;
        if (event.type === 'run.tool_activity') print(`  tool ${event.toolName} ${event.status}`);
        if (event.type === 'run.retrying') print(`  API error, retry ${event.attempt}/${event.maxAttempts}`);
      }
    })();

    // 4. Submit a turn. The receipt means "accepted and recorded", not "done".
    const receipt = await runtime.submitTurn({ sessionId, input: [{ type: 'text', text: options.prompt }] });
    print(`turn accepted as run ${receipt.runId}`);

    // 5. Completion is separate: wait for the run (or watch for its run.completed event).
    const run = await runtime.waitForRun(receipt.runId);
    print(`run ${run.outcome}${run.error ? `: ${run.error.message} [${run.error.code}]` : ''}`);
    print(`answer: ${answer}`);

    // 6. Usage for the run and for the session so far.
    const usage = run.usage;
    if (usage)
      print(`usage: ${usage.inputTokens} in / ${usage.outputTokens} out tokens, $${(usage.costUsd ?? 0).toFixed(4)}`);
    const session = await runtime.getSession(sessionId);
    print(`session total: ${session.usage.inputTokens} in / ${session.usage.outputTokens} out tokens`);

    // 7. Close the session (its process ends; it can be reopened later with continueSession).
    await runtime.closeSession({ sessionId });
    controller.abort();
    await following;
    return { sessionId, run, answer, eventTypes };
  } catch (error) {
    if (AgentError.isInstance(error)) print(`tether refused: ${error.message} [${error.code}]`);
    throw error;
  } finally {
    // 8. Always shut down: stops every process and closes the store (releasing the data dir).
    await runtime.shutdown();
  }
}
