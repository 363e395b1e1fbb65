import { describe, expect, it } from 'vitest';
import { buildClaudeEnvironment } from './build-environment.js';

describe('buildClaudeEnvironment', () => {
  it('applies the protocol floor over what is inherited and removes CLAUDECODE', () => {
    const environment = buildClaudeEnvironment({
      inherited: { PATH: '/bin', TERM: 'xterm-256color', CLAUDECODE: '1', UNSET: undefined },
    });
    expect(environment).toMatchObject({ PATH: '/bin', TERM: 'dumb', CI: 'true' });
    expect('CLAUDECODE' in environment).toBe(false);
    expect('UNSET' in environment).toBe(false);
  });

  it('drops the inherited variables that tie git to one repository; the session may still set one', () => {
    const environment = buildClaudeEnvironment({
      inherited: {
        GIT_DIR: '/elsewhere/.git',
        GIT_WORK_TREE: '/elsewhere',
        GIT_INDEX_FILE: '/elsewhere/.git/index',
        GIT_COMMON_DIR: '/elsewhere/.git',
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'core.worktree',
        GIT_CONFIG_VALUE_0: '/elsewhere',
        GIT_AUTHOR_NAME: 'A. Author',
        GIT_SSH_COMMAND: 'ssh -i key',
      },
      session: { GIT_INDEX_FILE: '/chosen/index' },
    });
    expect(Object.keys(environment).filter((name) => name.startsWith('GIT_'))).toEqual([
      'GIT_AUTHOR_NAME',
      'GIT_SSH_COMMAND',
      'GIT_INDEX_FILE',
    ]);
    expect(environment.GIT_INDEX_FILE).toBe('/chosen/index');
  });

  it('layers the session environment over the inherited one', () => {
    const environment = buildClaudeEnvironment({
      inherited: { A: 'inherited', B: 'inherited' },
      session: { B: 'session' },
    });
    expect(environment).toMatchObject({ A: 'inherited', B: 'session' });
  });

  it('strips OAuth tokens last (absent, not empty) but keeps ANTHROPIC_API_KEY', () => {
    const environment = buildClaudeEnvironment({
      inherited: {
        CLAUDE_CODE_OAUTH_TOKEN: 'oauth',
        CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR: '3',
        ANTHROPIC_API_KEY: 'key',
      },
      session: { CLAUDE_CODE_OAUTH_TOKEN: 'from-session' },
    });
    expect('CLAUDE_CODE_OAUTH_TOKEN' in environment).toBe(false);
    expect('CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR' in environment).toBe(false);
    expect(environment.ANTHROPIC_API_KEY).toBe('key');
  });

  it('keeps the inherited OAuth token when the host opts in', () => {
    const environment = buildClaudeEnvironment({
      inherited: { CLAUDE_CODE_OAUTH_TOKEN: 'oauth' },
      keepInheritedOAuthToken: true,
    });
    expect(environment.CLAUDE_CODE_OAUTH_TOKEN).toBe('oauth');
  });

  it('passes IS_SANDBOX through from the caller and caps retries when asked', () => {
    const environment = buildClaudeEnvironment({ inherited: { IS_SANDBOX: '1' }, maxRetries: 2 });
    expect(environment.IS_SANDBOX).toBe('1');
    expect(environment.CLAUDE_CODE_MAX_RETRIES).toBe('2');
  });

  it('turns file checkpoints on unless the session says false, whatever was inherited or set as a variable', () => {
    expect(buildClaudeEnvironment({ inherited: {} }).CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING).toBe('true');
    expect(
      buildClaudeEnvironment({ inherited: { CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: '0' }, fileCheckpointing: true })
        .CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING,
    ).toBe('true');
    const off = buildClaudeEnvironment({
      inherited: { CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: 'true' },
      session: { CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: 'true' },
      fileCheckpointing: false,
    });
    expect('CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING' in off).toBe(false);
  });
});
