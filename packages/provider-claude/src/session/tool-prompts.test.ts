import type { AgentProviderV1Part } from '@tether/provider-spec';
import { describe, expect, it } from 'vitest';
import { ToolPrompts } from './tool-prompts.js';

const bash = { subtype: 'can_use_tool', tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1' };

function prompts(policy: Partial<{ approvals: 'bridge' | 'deny'; questions: 'bridge' | 'deny' }> = {}) {
  const parts: AgentProviderV1Part[] = [];
  const notes: string[] = [];
  const answers: [string, Record<string, unknown>][] = [];
  const value = new ToolPrompts({
    policy: { approvals: 'bridge', questions: 'bridge', toolInputDetail: 'full', ...policy },
    emit: (part) => parts.push(part),
    note: (code) => notes.push(code),
  });
  const write = (requestId: string, response: Record<string, unknown>) => {
    answers.push([requestId, response]);
    return true;
  };
  return { value, parts, notes, answers, write };
}

describe('ToolPrompts', () => {
  it('denies what is still open when its run ends, once, and forgets it', () => {
    const { value, parts, answers, write } = prompts();
    value.onRequest('r1', bash, 'run_1', write);
    expect(parts).toMatchObject([{ type: 'interaction.requested', runId: 'run_1' }]);
    value.forgetRun('run_1', write);
    expect(answers).toEqual([['r1', { behavior: 'deny', message: expect.stringContaining('has ended') }]]);
    expect(value.size).toBe(0);
    value.forgetRun('run_1', write);
    expect(answers).toHaveLength(1);
  });

  it('denies a prompt that belongs to no run of ours without raising it', () => {
    const { value, parts, notes, answers, write } = prompts();
    value.onRequest('r1', bash, null, write);
    expect(parts).toEqual([]);
    expect(notes).toEqual(['claude.prompt_without_run']);
    expect(answers[0]?.[1]).toMatchObject({ behavior: 'deny' });
  });

  it('with questions denied, tells the model to ask in its reply', () => {
    const { value, answers, write } = prompts({ questions: 'deny' });
    value.onRequest('r1', { ...bash, tool_name: 'AskUserQuestion', input: { questions: [] } }, 'run_1', write);
    expect(answers[0]?.[1]).toEqual({ behavior: 'deny', message: expect.stringContaining('Ask them in your reply') });
  });
});
