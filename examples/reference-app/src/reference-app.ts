/**
 * A complete Tether host, meant to be copied: create the runtime, open a session in a
 * workspace, subscribe to its events, submit a turn, tell the receipt from the completion,
 * print usage, then close the session and shut down cleanly. A program also hands signals to
 * the runtime (see main.ts): then a run can end because the host is stopping, which is no failure.
 */
import { AgentError, type ProtocolEvent, type RunSnapshot } from '@tether/protocol';
import { type ClaudeProviderSettings, createClaudeProvider } from '@tether/provider-claude';
import { type AgentRuntime, createAgentRuntime } from '@tether/runtime';
import { openSqliteStore, resolveDataDir } from '@tether/store-sqlite';

export interface ReferenceRuntimeOptions {
  /** Where Tether keeps sessions; default $TETHER_HOME or ~/.tether. */
  readonly dataDir?: string;
  /** How to find and start claude (binary path, environment); defaults are fine on a developer machine. */
  readonly provider?: ClaudeProviderSettings;
}

export interface ReferenceAppOptions extends ReferenceRuntimeOptions {
  /** The directory the agent works in (absolute). */
  readonly workspace: string;
  readonly prompt: string;
  /**
   * A runtime you own: you hand it the signals and shut it down (main.ts does both). Without one,
   * a runtime is made from dataDir and provider and shut down before this function returns.
   */
  readonly runtime?: AgentRuntime;
  /** Where to print; default stdout. */
  readonly print?: (line: string) => void;
}

export interface ReferenceAppResult {
  readonly sessionId: string;
  readonly run: RunSnapshot;
  /** The runtime shut down while the run was active (a signal): the run was recorded interrupted, the session left open. */
  readonly stopped: boolean;
  readonly answer: string;
  readonly eventTypes: readonly ProtocolEvent['type'][];
}

/** 1. The runtime: one provider, one durable store. The runtime owns the store from here on. */
export async function createReferenceRuntime(options: ReferenceRuntimeOptions = {}): Promise<AgentRuntime> {
  const store = await openSqliteStore({ dataDir: resolveDataDir({ dataDir: options.dataDir }) });
  return createAgentRuntime({ providers: [createClaudeProvider(options.provider)], store });
}

export async function runReferenceApp(options: ReferenceAppOptions): Promise<ReferenceAppResult> {
  const print = options.print ?? ((line: string) => console.log(line));
  const runtime = options.runtime ?? (await createReferenceRuntime(options));

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
    if (run.error?.code === 'runtime_stopped') {
      // The runtime is shutting down (the host got a signal): it recorded the run interrupted and
      // ends the agent itself. It takes no more commands, so there is nothing to close: the session
      // stays open in the store, for continueSession to pick up later.
      print(`run stopped: tether is shutting down (session ${sessionId} kept)`);
      controller.abort();
      await following;
      return { sessionId, run, stopped: true, answer, eventTypes };
    }
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
    return { sessionId, run, stopped: false, answer, eventTypes };
  } catch (error) {
    if (AgentError.isInstance(error)) print(`tether refused: ${error.message} [${error.code}]`);
    throw error;
  } finally {
    // 8. Always shut down what you own: it stops every process and closes the store (releasing the data dir).
    if (options.runtime === undefined) await runtime.shutdown();
  }
}
