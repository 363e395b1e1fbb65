import { AgentError } from '@tether/protocol';
import type {
  AgentProviderV1,
  AgentProviderV1Part,
  AgentProviderV1Session,
  AgentProviderV1Turn,
} from '@tether/provider-spec';

/**
 * The agent of the first-turn rehearsal (first-turn-rehearsal.ts): it starts no process and answers
 * at once. Its first turn is answered (a "process" started, a delta, the usage, the end); any later
 * turn streams a delta and runs until it is interrupted.
 */
export function createRehearsalProvider(): AgentProviderV1 {
  return {
    specificationVersion: 'agent-provider-v1',
    name: 'rehearsal',
    capabilities: {
      resume: false,
      interrupt: true,
      approvals: false,
      questions: false,
      controls: false,
      usage: true,
      setModel: false,
      setMode: false,
      fork: false,
      rewind: false,
      rewindFiles: false,
      images: false,
      modelList: false,
      inputParts: ['text'],
    },
    async doProbe() {
      return { available: true };
    },
    async doOpenSession(options) {
      return new RehearsalSession(options.emit, options.messageEnded ?? (() => undefined));
    },
  };
}

class RehearsalSession implements AgentProviderV1Session {
  private readonly emit: (part: AgentProviderV1Part) => void;
  private readonly messageEnded: () => void;
  private turns = 0;

  constructor(emit: (part: AgentProviderV1Part) => void, messageEnded: () => void) {
    this.emit = emit;
    this.messageEnded = messageEnded;
  }

  async doTurn({ runId }: AgentProviderV1Turn): Promise<void> {
    this.turns += 1;
    if (this.turns === 1) {
      // What the agent's start reports: a process that is nobody's (no pid is ever signalled for it).
      this.emit({ type: 'session.process_started', pid: process.pid, startTime: null, marker: 'rehearsal' });
    }
    this.emit({ type: 'run.message_delta', runId, blockId: 'block-1', text: 'Hello.' });
    // As the agent's message_stop does: the delta is committed now, not at the writer's coalescing window.
    this.messageEnded();
    if (this.turns > 1) return;
    this.emit({
      type: 'run.usage',
      runId,
      inputTokens: 1,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      costUsd: null,
    });
    this.emit({ type: 'run.completed', runId, outcome: 'succeeded', stopReason: 'end_turn' });
  }

  async doInterrupt({ runId }: { readonly runId: string }): Promise<{ readonly applied: boolean }> {
    this.emit({ type: 'run.completed', runId, outcome: 'interrupted' });
    return { applied: true };
  }

  async doStop(): Promise<void> {}

  requiresRestartFor(): boolean {
    return false;
  }

  doControl = notRehearsed;
  doSetModel = notRehearsed;
  doGetContextUsage = notRehearsed;
  doGetSessionCost = notRehearsed;
  doRespond = notRehearsed;
  doSetPermissionMode = notRehearsed;
}

async function notRehearsed(): Promise<never> {
  throw new AgentError({
    code: 'capability_unsupported',
    message: 'The first-turn rehearsal takes only turns and stops.',
  });
}
