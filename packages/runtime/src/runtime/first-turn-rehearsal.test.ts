import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { createAgentRuntime } from './agent-runtime.js';
import { rehearseSession } from './first-turn-rehearsal.js';
import type { AgentRuntime, AgentRuntimeOptions } from './runtime-types.js';

// A step the runtime refuses would end the rehearsal early: it would still be cheap, but no longer run the path a first session takes.
describe('the first-turn rehearsal the runtime runs as it starts', () => {
  it('takes a session through an answered turn and a stopped one, then leaves nothing running', async () => {
    let rehearsal: AgentRuntime | undefined;
    const delivered = await rehearseSession(async (options: AgentRuntimeOptions) => {
      rehearsal = await createAgentRuntime(options);
      return rehearsal;
    });
    const runEnds = delivered.filter((type) => type === 'run.completed');
    expect(delivered[0]).toBe('session.opened');
    expect(delivered).toContain('session.process_started');
    expect(delivered).toContain('run.message_delta');
    expect(delivered).toContain('run.usage');
    expect(delivered).toContain('run.interrupt_requested');
    expect(runEnds).toHaveLength(2);
    expect(delivered.at(-1)).toBe('session.closed');
    const afterwards = await rehearsal!
      .openSession({ workspace: { kind: 'directory', path: process.cwd() } })
      .catch((error: unknown) => error);
    expect(AgentError.isInstance(afterwards) ? afterwards.code : afterwards).toBe('runtime_stopped');
  });
});
