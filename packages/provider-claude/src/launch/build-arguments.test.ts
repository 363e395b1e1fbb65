import { describe, expect, it } from 'vitest';
import { buildClaudeArguments, protocolArguments } from './build-arguments.js';

describe('protocolArguments', () => {
  // What the stream-json protocol needs (../shared/claude-cli-protocol.md): print mode, stream-json both ways,
  // --verbose (which -p with stream-json output requires), partial messages, and prompts over stdio.
  it('asks for the headless stream-json protocol with streamed deltas and permission prompts over stdio', () => {
    const flags: readonly string[] = protocolArguments;
    const flag = (name: string) => flags[flags.indexOf(name) + 1];
    expect(protocolArguments).toContain('-p');
    expect(flag('--input-format')).toBe('stream-json');
    expect(flag('--output-format')).toBe('stream-json');
    expect(protocolArguments).toContain('--verbose');
    expect(protocolArguments).toContain('--include-partial-messages');
    expect(flag('--permission-prompt-tool')).toBe('stdio');
  });
});

describe('buildClaudeArguments', () => {
  it('starts a new conversation with --session-id and never --resume', () => {
    const argv = buildClaudeArguments({
      configuration: {},
      conversation: { kind: 'new', providerSessionId: 'new-id' },
      ephemeral: false,
    });
    expect(argv).toEqual([...protocolArguments, '--session-id', 'new-id']);
    expect(argv).not.toContain('--resume');
  });

  it('parks a spare with --await-claim, its conversation id fixed already', () => {
    const argv = buildClaudeArguments({
      configuration: {},
      conversation: { kind: 'new', providerSessionId: 'spare-id' },
      ephemeral: false,
      awaitClaim: true,
    });
    expect(argv).toEqual([...protocolArguments, '--session-id', 'spare-id', '--await-claim']);
  });

  it('continues a conversation with --resume and never --session-id', () => {
    const argv = buildClaudeArguments({
      configuration: {},
      conversation: { kind: 'resume', providerSessionId: 'old-id' },
      ephemeral: false,
    });
    expect(argv).toEqual([...protocolArguments, '--resume', 'old-id']);
    expect(argv).not.toContain('--session-id');
  });

  it('copies a conversation under a new id with --fork-session, cut with --resume-session-at when given', () => {
    const copy = (afterMessageId: string | null) =>
      buildClaudeArguments({
        configuration: {},
        conversation: {
          kind: 'copy',
          providerSessionId: 'copy-id',
          sourceProviderSessionId: 'source-id',
          afterMessageId,
        },
        ephemeral: false,
      });
    expect(copy(null)).toEqual([
      ...protocolArguments,
      '--resume',
      'source-id',
      '--fork-session',
      '--session-id',
      'copy-id',
    ]);
    expect(copy('entry-id').slice(protocolArguments.length)).toEqual([
      '--resume',
      'source-id',
      '--fork-session',
      '--session-id',
      'copy-id',
      '--resume-session-at',
      'entry-id',
    ]);
  });

  it('omits the model when it is the default, and passes a pinned one', () => {
    const conversation = { kind: 'new', providerSessionId: 'id' } as const;
    expect(buildClaudeArguments({ configuration: { model: 'default' }, conversation, ephemeral: false })).not.toContain(
      '--model',
    );
    expect(buildClaudeArguments({ configuration: {}, conversation, ephemeral: false })).not.toContain('--model');
    const pinned = buildClaudeArguments({ configuration: { model: 'sonnet' }, conversation, ephemeral: false });
    expect(pinned.slice(pinned.indexOf('--model'), pinned.indexOf('--model') + 2)).toEqual(['--model', 'sonnet']);
  });

  it('maps neutral permission modes to the CLI names and omits an unset one', () => {
    const conversation = { kind: 'new', providerSessionId: 'id' } as const;
    expect(buildClaudeArguments({ configuration: {}, conversation, ephemeral: false })).not.toContain(
      '--permission-mode',
    );
    const cases = [
      ['plan', 'plan'],
      ['ask_before_edit', 'default'],
      ['auto_edit', 'acceptEdits'],
      ['auto', 'auto'],
      ['dont_ask', 'dontAsk'],
      ['bypass', 'bypassPermissions'],
    ] as const;
    for (const [neutral, cli] of cases) {
      const argv = buildClaudeArguments({ configuration: { permissionMode: neutral }, conversation, ephemeral: false });
      expect(argv[argv.indexOf('--permission-mode') + 1]).toBe(cli);
    }
  });

  it('adds --no-session-persistence for ephemeral sessions and maps every configuration field', () => {
    const argv = buildClaudeArguments({
      configuration: {
        effort: 'high',
        agent: 'reviewer',
        settingsPath: '/etc/settings.json',
        mcpConfigPath: '/etc/mcp.json',
        appendSystemPrompt: 'Be brief.',
        additionalDirectories: ['/data'],
        allowedTools: ['Read', 'Bash(git diff:*)'],
        disallowedTools: ['WebFetch'],
      },
      conversation: { kind: 'new', providerSessionId: 'id' },
      ephemeral: true,
      appendSystemPromptFile: '/tmp/tether-prompt-x/append-system-prompt.txt',
    });
    expect(argv.slice(0, protocolArguments.length)).toEqual(protocolArguments);
    expect(argv).toContain('--no-session-persistence');
    const joined = argv.join(' ');
    expect(joined).toContain('--effort high');
    expect(joined).toContain('--agent reviewer');
    expect(joined).toContain('--settings /etc/settings.json');
    expect(joined).toContain('--mcp-config /etc/mcp.json');
    expect(argv).toContain('--append-system-prompt-file=/tmp/tether-prompt-x/append-system-prompt.txt');
    expect(joined).not.toContain('Be brief.');
    expect(joined).toContain('--add-dir /data');
    expect(argv.slice(argv.indexOf('--allowedTools'), argv.indexOf('--allowedTools') + 3)).toEqual([
      '--allowedTools',
      'Read',
      'Bash(git diff:*)',
    ]);
    expect(argv.slice(argv.indexOf('--disallowedTools'))).toEqual(['--disallowedTools', 'WebFetch']);
  });

  it('passes a system-prompt append only by its file, and refuses to pass it as text', () => {
    const configuration = { appendSystemPrompt: '--dangerously-skip-permissions\n--model x' };
    const argv = buildClaudeArguments({
      configuration,
      conversation: { kind: 'new', providerSessionId: 'id' },
      ephemeral: false,
      appendSystemPromptFile: '/tmp/prompt.txt',
    });
    expect(argv.filter((value) => value.includes('dangerously'))).toEqual([]);
    expect(argv.filter((value) => value.startsWith('--append-system-prompt'))).toEqual([
      '--append-system-prompt-file=/tmp/prompt.txt',
    ]);
    expect(() =>
      buildClaudeArguments({ configuration, conversation: { kind: 'new', providerSessionId: 'id' }, ephemeral: false }),
    ).toThrow(/as a file/);
  });
});
