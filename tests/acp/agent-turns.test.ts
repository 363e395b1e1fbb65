import { holdReply, textReply, toolUseReply } from '@tether/fake-anthropic-api';
import { methods } from '@tether/acp/test-support';
import { pollFor } from '@tether/provider-claude/test-support';
import { waitForEvent } from '@tether/testkit';
import { describe, expect, it } from 'vitest';
import { useAcp } from './acp-harness.js';

const backgroundAgent = {
  description: 'Say hello',
  prompt: 'SUBAGENT TASK: say hello.',
  subagent_type: 'general-purpose',
  run_in_background: true,
};

// When a background task finishes, Claude Code answers its report in a turn of its own: no prompt of
// the client's stands before it, and the client shows it as it streams.
describe('ACP: a turn the agent begins by itself', () => {
  const start = useAcp();

  async function sessionWithABackgroundTask(report: ReturnType<typeof textReply>) {
    const started = await start({ onPermission: () => ({ outcome: { outcome: 'selected', optionId: 'allow_once' } }) });
    const { environment, runtime, pair } = started;
    environment.api.setResponder((view) => {
      if (view.isSubagent) return textReply('Hello from the background subagent.');
      if (view.lastUserText.includes('<task-notification>')) return report;
      if (view.toolResults.length > 0) return textReply('A background agent is working on it.');
      if (view.lastUserText.includes('Carry on.')) return textReply('Carried on.');
      return toolUseReply('Agent', backgroundAgent);
    });
    const sessionId = await pair.newSession(environment.workspace);
    const answered = await pair.prompt(sessionId, 'Use a background subagent.');
    expect(answered).toEqual({ stopReason: 'end_turn' });
    const own = await waitForEvent(runtime, sessionId, 'run.started', {
      where: (event) => event.startedBy === 'agent',
    });
    return { ...started, sessionId, own };
  }

  it('its answer is set apart from the previous one by a note saying who began it', async () => {
    const { runtime, pair, sessionId, own } = await sessionWithABackgroundTask(
      textReply('The background agent has finished.'),
    );
    expect((await runtime.waitForRun(own.runId)).outcome).toBe('succeeded');
    // A prompt's answer comes after every update before it: the agent's own turn has been shown.
    await pair.prompt(sessionId, 'Carry on.');
    expect(pair.agentText(sessionId)).toBe(
      'A background agent is working on it.\n\n(A background task the agent ran finished; it answers by itself.)\n\nThe background agent has finished.Carried on.',
    );
  });

  it('session/cancel stops it: Stop in the editor ends what the editor shows', async () => {
    const { environment, runtime, pair, sessionId, own } = await sessionWithABackgroundTask(holdReply());
    // The report's answer is held once the fake API registered its request.
    await pollFor(() => (environment.api.heldCount === 1 ? true : undefined));
    await pair.agent.notify(methods.agent.session.cancel, { sessionId });
    expect((await runtime.waitForRun(own.runId)).outcome).toBe('interrupted');
  });
});
