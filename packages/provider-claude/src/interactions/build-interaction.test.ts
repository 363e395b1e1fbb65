import { describe, expect, it } from 'vitest';
import { type ToolPermissionRequest, buildInteraction } from './build-interaction.js';
import { buildPermissionResponse } from './build-permission-response.js';

function request(fields: Partial<ToolPermissionRequest>): ToolPermissionRequest {
  return {
    subtype: 'can_use_tool',
    tool_name: 'Bash',
    input: {},
    tool_use_id: 'toolu_1',
    ...fields,
  } as ToolPermissionRequest;
}

const option = (label: string) => ({ label, description: `${label} option` });
const question = (text: string, labels = ['A', 'B']) => ({
  question: text,
  header: 'H',
  options: labels.map(option),
  multiSelect: false,
});

describe('buildInteraction', () => {
  it('makes an approval with a category, sanitised CLI text and the tool input', () => {
    const built = buildInteraction(
      request({
        tool_name: 'Bash',
        input: { command: 'ls' },
        description: 'List \u001b[31mfiles\u001b[0m',
        decision_reason: 'x'.repeat(10_000),
        permission_suggestions: [{ type: 'addRules' }],
        suppress_always_allow_rule: false,
        default_to_no: true,
      }),
      { toolInputDetail: 'full' },
    );
    expect(built).toMatchObject({
      request: {
        kind: 'approval',
        category: 'command',
        description: 'List files',
        input: { command: 'ls' },
        offerSessionApproval: true,
        defaultToNo: true,
      },
    });
    expect(
      ('request' in built && built.request.kind === 'approval' && built.request.decisionReason?.length) || 0,
    ).toBeLessThanOrEqual(4000);
  });

  it('maps tool names to categories, withholds input on request, and never offers session approval against the CLI', () => {
    const cases = [
      ['Read', 'file_read'],
      ['Edit', 'file_write'],
      ['WebFetch', 'network'],
      ['mcp__github__create_issue', 'mcp'],
      ['Skill', 'other'],
    ] as const;
    for (const [toolName, category] of cases) {
      expect(buildInteraction(request({ tool_name: toolName }), { toolInputDetail: 'none' })).toMatchObject({
        request: { category, input: null, offerSessionApproval: false },
      });
    }
    expect(
      buildInteraction(request({ permission_suggestions: [{ type: 'addRules' }], suppress_always_allow_rule: true }), {
        toolInputDetail: 'full',
      }),
    ).toMatchObject({
      request: { offerSessionApproval: false },
    });
  });

  it('shortens huge tool inputs so one prompt cannot bloat the log', () => {
    const built = buildInteraction(
      request({ tool_name: 'Write', input: { file_path: '/x', content: 'y'.repeat(100_000) } }),
      { toolInputDetail: 'full' },
    );
    const content = 'request' in built && built.request.kind === 'approval' ? String(built.request.input?.content) : '';
    expect(content.length).toBeLessThan(40_000);
    expect(content).toContain('more characters');
  });

  it('makes a question set, and refuses malformed ones whole with a reason token', () => {
    const ask = (input: Record<string, unknown>) =>
      buildInteraction(request({ tool_name: 'AskUserQuestion', input }), { toolInputDetail: 'full' });
    expect(ask({ questions: [question('Q1?'), { ...question('Q2?'), multiSelect: true }] })).toMatchObject({
      request: {
        kind: 'question_set',
        sensitive: false,
        questions: [
          { question: 'Q1?', multiSelect: false },
          { question: 'Q2?', multiSelect: true },
        ],
      },
    });
    expect(ask({ questions: [question('Q?'), question('Q?')] })).toEqual({ refusal: 'duplicate_question' });
    expect(ask({ questions: [question('Q?', ['A', 'A'])] })).toEqual({ refusal: 'duplicate_label' });
    expect(ask({ questions: [] })).toEqual({ refusal: 'question_count' });
    expect(ask({ questions: [1, 2, 3, 4, 5].map((index) => question(`Q${index}?`)) })).toEqual({
      refusal: 'question_count',
    });
    expect(ask({ questions: [question('Q?', ['A'])] })).toEqual({ refusal: 'option_count' });
    expect(ask({ questions: [question('x'.repeat(3000))] })).toEqual({ refusal: 'text_too_long' });
    expect(ask({ questions: [question('Q?')], answers: { 'Q?': 'A' } })).toEqual({ refusal: 'prefilled_answers' });
    expect(ask({ questions: 'not a list' })).toEqual({ refusal: 'malformed_questions' });
  });
});

describe('buildPermissionResponse', () => {
  const bash = request({
    tool_name: 'Bash',
    input: { command: 'touch x' },
    permission_suggestions: [
      {
        type: 'addRules',
        rules: [{ toolName: 'Bash', ruleContent: 'touch x' }],
        behavior: 'allow',
        destination: 'localSettings',
      },
      { type: 'setMode', mode: 'acceptEdits', destination: 'session' },
    ],
  });

  it('approves once with no permission changes, or for the session with the matching rule aimed at the session', () => {
    expect(buildPermissionResponse(bash, { decision: 'approve' })).toEqual({ behavior: 'allow', toolUseID: 'toolu_1' });
    expect(buildPermissionResponse(bash, { decision: 'approve', scope: 'session' })).toEqual({
      behavior: 'allow',
      updatedPermissions: [
        {
          type: 'addRules',
          rules: [{ toolName: 'Bash', ruleContent: 'touch x' }],
          behavior: 'allow',
          destination: 'session',
        },
      ],
      toolUseID: 'toolu_1',
    });
    expect(buildPermissionResponse(bash, { decision: 'approve', scope: 'local_settings' })).toMatchObject({
      updatedPermissions: [{ destination: 'localSettings' }],
    });
  });

  it('passes edited input, deny messages and the stop flag', () => {
    expect(buildPermissionResponse(bash, { decision: 'approve', updatedInput: { command: 'touch y' } })).toMatchObject({
      updatedInput: { command: 'touch y' },
    });
    expect(buildPermissionResponse(bash, { decision: 'deny', message: 'No.', interrupt: true })).toEqual({
      behavior: 'deny',
      message: 'No.',
      interrupt: true,
      toolUseID: 'toolu_1',
    });
    expect(buildPermissionResponse(bash, { decision: 'deny' })).toMatchObject({
      behavior: 'deny',
      message: expect.any(String),
    });
  });

  it('keys question answers by the question text exactly as the model wrote it, with skips as annotations', () => {
    const raw = 'Which\u0007 color?';
    const ask = request({ tool_name: 'AskUserQuestion', input: { questions: [question(raw), question('Sizes?')] } });
    expect(
      buildPermissionResponse(ask, { decision: 'answer', answers: [{ selected: ['A', 'B'] }, { skipped: true }] }),
    ).toEqual({
      behavior: 'allow',
      updatedInput: {
        questions: [question(raw), question('Sizes?')],
        answers: { [raw]: 'A, B' },
        annotations: { 'Sizes?': { unanswered: 'skipped' } },
      },
      toolUseID: 'toolu_1',
    });
    expect(buildPermissionResponse(ask, { decision: 'decline' })).toMatchObject({ behavior: 'deny' });
  });

  it('continues a plan in the chosen mode', () => {
    const exit = request({ tool_name: 'ExitPlanMode', input: {} });
    expect(buildPermissionResponse(exit, { decision: 'approve', continueInMode: 'auto_edit' })).toMatchObject({
      updatedPermissions: [{ type: 'setMode', mode: 'acceptEdits', destination: 'session' }],
    });
  });
});
