import { describe, expect, it } from 'vitest';
import { buildClaudeArguments } from '../launch/build-arguments.js';
import { buildSdkOptions } from './build-sdk-options.js';

const environment = { PATH: '/usr/bin', HOME: '/home/test', TERM: 'dumb' };

describe('buildSdkOptions', () => {
  it("a new conversation with nothing configured: the CLI's own system prompt, partial messages, our id", () => {
    const plan = {
      configuration: {},
      conversation: { kind: 'new' as const, providerSessionId: 'c0ffee00-0000-4000-8000-000000000000' },
      ephemeral: false,
      cwd: '/work',
      environment,
    };
    expect(buildSdkOptions(plan, '/bin/claude')).toEqual({
      cwd: '/work',
      env: environment,
      pathToClaudeCodeExecutable: '/bin/claude',
      includePartialMessages: true,
      systemPrompt: { type: 'preset', preset: 'claude_code' },
      sessionId: 'c0ffee00-0000-4000-8000-000000000000',
    });
  });

  it('every configuration field the cli transport turns into a flag, as the SDK option for it', () => {
    const configuration = {
      model: 'sonnet',
      effort: 'high' as const,
      agent: 'reviewer',
      permissionMode: 'auto_edit' as const,
      settingsPath: '/work/settings.json',
      mcpConfigPath: '/work/mcp.json',
      allowedTools: ['Read', 'Bash(git diff:*)'],
      disallowedTools: ['WebFetch'],
      appendSystemPrompt: 'Be brief.',
      additionalDirectories: ['/data'],
    };
    const plan = {
      configuration,
      conversation: { kind: 'resume' as const, providerSessionId: 'c0ffee00-0000-4000-8000-000000000001' },
      ephemeral: true,
      cwd: '/work',
      environment,
    };
    expect(buildSdkOptions(plan, '/bin/claude')).toEqual({
      cwd: '/work',
      env: environment,
      pathToClaudeCodeExecutable: '/bin/claude',
      includePartialMessages: true,
      systemPrompt: { type: 'preset', preset: 'claude_code', append: 'Be brief.' },
      resume: 'c0ffee00-0000-4000-8000-000000000001',
      model: 'sonnet',
      permissionMode: 'acceptEdits',
      effort: 'high',
      agent: 'reviewer',
      settings: '/work/settings.json',
      persistSession: false,
      extraArgs: { 'mcp-config': '/work/mcp.json' },
      additionalDirectories: ['/data'],
      allowedTools: ['Read', 'Bash(git diff:*)'],
      disallowedTools: ['WebFetch'],
    });
    // The same launch through the cli transport, for comparison.
    expect(buildClaudeArguments({ ...plan, appendSystemPromptFile: '/tmp/append.txt' })).toEqual(
      expect.arrayContaining([
        '--resume',
        '--model',
        'sonnet',
        '--permission-mode',
        'acceptEdits',
        '--no-session-persistence',
        '--mcp-config',
        '/work/mcp.json',
      ]),
    );
  });

  it("the default model is the CLI's own: no model option", () => {
    const plan = {
      configuration: { model: 'default' },
      conversation: { kind: 'new' as const, providerSessionId: 'x' },
      ephemeral: false,
      cwd: '/work',
      environment,
    };
    expect(buildSdkOptions(plan, '/bin/claude')).not.toHaveProperty('model');
  });

  it('a copy is a fork of its source under our id, cut where asked; file checkpoints follow the environment', () => {
    const plan = {
      configuration: {},
      conversation: {
        kind: 'copy' as const,
        providerSessionId: 'copy-id',
        sourceProviderSessionId: 'source-id',
        afterMessageId: 'entry-id',
      },
      ephemeral: false,
      cwd: '/work',
      environment: { ...environment, CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: 'true' },
    };
    expect(buildSdkOptions(plan, '/bin/claude')).toMatchObject({
      resume: 'source-id',
      forkSession: true,
      sessionId: 'copy-id',
      resumeSessionAt: 'entry-id',
      enableFileCheckpointing: true,
    });
    const whole = buildSdkOptions(
      { ...plan, conversation: { ...plan.conversation, afterMessageId: null }, environment },
      '/bin/claude',
    );
    expect(whole).not.toHaveProperty('resumeSessionAt');
    expect(whole).not.toHaveProperty('enableFileCheckpointing');
  });
});
