import { describe, expect, it } from 'vitest';
import { AgentError } from './errors/agent-error.js';
import { errorCodeTable, exitCodeForCode, httpStatusForCode } from './errors/error-codes.js';
import { parseCommand } from './parse-command.js';

function refused(value: unknown): AgentError {
  try {
    parseCommand(value);
  } catch (error) {
    if (AgentError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the command to be refused');
}

const sessionId = `ses_${'a'.repeat(32)}`;

describe('parseCommand', () => {
  it('accepts each command with a type and a commandId', () => {
    expect(
      parseCommand({
        type: 'open_session',
        commandId: 'c1',
        workspace: { kind: 'directory', path: '/tmp' },
        model: 'sonnet',
        permissionMode: 'plan',
      }).type,
    ).toBe('open_session');
    expect(parseCommand({ type: 'open_session', commandId: 'c2', continueSession: sessionId }).type).toBe(
      'open_session',
    );
    expect(
      parseCommand({ type: 'submit_turn', commandId: 'c3', sessionId, input: [{ type: 'text', text: 'hi' }] }).type,
    ).toBe('submit_turn');
    expect(parseCommand({ type: 'interrupt_run', commandId: 'c4', sessionId }).type).toBe('interrupt_run');
    expect(parseCommand({ type: 'close_session', commandId: 'c5', sessionId }).type).toBe('close_session');
  });

  it('refuses unknown fields, unknown types and missing commandIds with invalid_command', () => {
    expect(
      refused({ type: 'submit_turn', commandId: 'c', sessionId, input: [{ type: 'text', text: 'x' }], extra: 1 }).code,
    ).toBe('invalid_command');
    expect(refused({ type: 'launch_rockets', commandId: 'c' }).code).toBe('invalid_command');
    expect(refused({ type: 'close_session', sessionId }).code).toBe('invalid_command');
    expect(refused({ type: 'open_session', commandId: 'c' }).message).toContain('workspace');
  });

  it('never echoes the offending values back', () => {
    const error = refused({
      type: 'open_session',
      commandId: 'c',
      workspace: { kind: 'directory', path: '/tmp' },
      environment: { 'NOT VALID': 'sk-ant-secret' },
    });
    expect(error.code).toBe('invalid_command');
    expect(JSON.stringify(error.toObject())).not.toContain('sk-ant-secret');
  });

  it('refuses configuration that could pose as a CLI flag', () => {
    expect(
      refused({
        type: 'open_session',
        commandId: 'c',
        workspace: { kind: 'directory', path: '/tmp' },
        model: '--dangerously-skip-permissions',
      }).code,
    ).toBe('invalid_command');
    expect(
      refused({
        type: 'open_session',
        commandId: 'c',
        workspace: { kind: 'directory', path: '/tmp' },
        allowedTools: ['--resume'],
      }).code,
    ).toBe('invalid_command');
  });

  it('takes a model name at open_session as set_model does: one word, no space or line break', () => {
    for (const model of ['bad model', 'sonnet\n--print']) {
      const open = { type: 'open_session', commandId: 'c', workspace: { kind: 'directory', path: '/tmp' }, model };
      expect(refused(open).code).toBe('invalid_command');
      expect(refused({ type: 'set_model', commandId: 'c', sessionId, model }).code).toBe('invalid_command');
      // The message says which rule the name broke, not only that it is not a model name.
      expect(refused({ type: 'set_model', commandId: 'c', sessionId, model }).message).toContain(
        'model: a model name or alias is one word: no space or control character, and no leading "-"',
      );
    }
  });

  it('refuses inline JSON where a settings or MCP file path belongs, with reason inline_json', () => {
    const open = { type: 'open_session', commandId: 'c', workspace: { kind: 'directory', path: '/tmp' } };
    for (const field of ['settingsPath', 'mcpConfigPath']) {
      for (const value of ['{"hooks":{}}', ' \n {"mcpServers":{}} ', '[1]']) {
        const error = refused({ ...open, [field]: value });
        expect(error.code).toBe('invalid_command');
        expect(error.details).toMatchObject({ reason: 'inline_json', issues: [{ path: field }] });
        expect(error.message).toContain('path of a JSON file');
      }
    }
    expect(parseCommand({ ...open, settingsPath: './{odd}.json', mcpConfigPath: '/etc/mcp.json' }).type).toBe(
      'open_session',
    );
  });

  it('takes any appendSystemPrompt text, a leading "-" too, but no NUL and nothing over 100,000 UTF-8 bytes', () => {
    const open = { type: 'open_session', commandId: 'c', workspace: { kind: 'directory', path: '/tmp' } };
    expect(
      parseCommand({ ...open, appendSystemPrompt: '--dangerously-skip-permissions is not a flag here' }).type,
    ).toBe('open_session');
    expect(refused({ ...open, appendSystemPrompt: 'a\0b' }).details).toMatchObject({ reason: 'nul_character' });
    // 40,000 characters, 120,000 bytes: under the character count, over the bytes a command line takes.
    expect(refused({ ...open, appendSystemPrompt: '€'.repeat(40_000) }).details).toMatchObject({ reason: 'too_large' });
  });

  it('bounds environment by count and total size, and refuses NUL in values', () => {
    const open = { type: 'open_session', commandId: 'c', workspace: { kind: 'directory', path: '/tmp' } };
    const many = Object.fromEntries(Array.from({ length: 101 }, (_, index) => [`V${index}`, 'x']));
    expect(refused({ ...open, environment: many }).details).toMatchObject({
      reason: 'environment_too_many',
      issues: [{ path: 'environment' }],
    });
    const large = { A: 'x'.repeat(60_000), B: 'y'.repeat(60_000) };
    const error = refused({ ...open, environment: large });
    expect(error.details).toMatchObject({ reason: 'environment_too_large' });
    expect(error.message).toContain('100,000 bytes');
    expect(refused({ ...open, environment: { A: 'a\0b' } }).details).toMatchObject({ reason: 'nul_character' });
    expect(
      parseCommand({
        ...open,
        environment: Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`V${index}`, 'x'.repeat(900)])),
      }).type,
    ).toBe('open_session');
  });

  it('refuses a configuration whose values together would not fit a launch, each within its own bound', () => {
    const open = { type: 'open_session', commandId: 'c', workspace: { kind: 'directory', path: '/tmp' } };
    const rules = Array.from(
      { length: 200 },
      (_, index) => `Bash(${String(index).padStart(3, '0')}${'x'.repeat(3000)})`,
    );
    expect(parseCommand({ ...open, allowedTools: rules }).type).toBe('open_session');
    const error = refused({ ...open, allowedTools: rules, disallowedTools: rules });
    expect(error.details).toMatchObject({ reason: 'configuration_too_large' });
    expect(error.message).toContain('1,048,576');
  });

  it('keeps reopen settings-free: configuration with continueSession is refused', () => {
    expect(refused({ type: 'open_session', commandId: 'c', continueSession: sessionId, model: 'sonnet' }).code).toBe(
      'invalid_command',
    );
    // Not taken silently either: a reopened session's turns would be stored in clear all the same.
    expect(
      refused({ type: 'open_session', commandId: 'c', continueSession: sessionId, redactInput: true }),
    ).toMatchObject({
      code: 'invalid_command',
      details: { issues: [expect.objectContaining({ path: 'redactInput' })] },
    });
  });

  it('refuses a model name holding NUL or another control character, on open and on set_model', () => {
    const workspace = { kind: 'directory', path: '/repo' };
    expect(refused({ type: 'open_session', commandId: 'c', workspace, model: 'x\u0000y' }).code).toBe(
      'invalid_command',
    );
    expect(refused({ type: 'set_model', commandId: 'c', sessionId, model: 'a\u0000b' }).code).toBe('invalid_command');
    expect(refused({ type: 'set_model', commandId: 'c', sessionId, model: 'a\u0007b' }).code).toBe('invalid_command');
  });

  it('answers an input part type Tether does not know with capability_unsupported, and a known one of the wrong shape with invalid_command', () => {
    const unknown = refused({
      type: 'submit_turn',
      commandId: 'c',
      sessionId,
      input: [{ type: 'audio', data: 'AAAA' }],
    });
    expect(unknown).toMatchObject({ code: 'capability_unsupported', details: { reason: 'input_part_type', index: 0 } });
    expect(unknown.message).toMatch(/^Input part 1 of 1 has type "audio"/);
    // Names of Object.prototype's members are types Tether does not know either (they used to throw a TypeError).
    for (const type of ['valueOf', 'constructor', '__proto__', 'toString'])
      expect(refused({ type: 'submit_turn', commandId: 'c', sessionId, input: [{ type }] })).toMatchObject({
        code: 'capability_unsupported',
        details: { reason: 'input_part_type', index: 0 },
      });
    for (const part of [
      { type: 'text', text: '' },
      { type: 'image', source: {} },
      { type: 'image', data: 'AAAA' },
      { type: 'image', mediaType: 'image/bmp', data: 'AAAA' },
      { type: 'image', path: 'a.png', mediaType: 'image/png' },
      { type: 'file', path: '' },
    ]) {
      const error = refused({
        type: 'submit_turn',
        commandId: 'c',
        sessionId,
        input: [{ type: 'text', text: 'x' }, part],
      });
      expect(error, JSON.stringify(part)).toMatchObject({
        code: 'invalid_command',
        details: { reason: 'input_part_shape', index: 1 },
      });
      // Counted as a person counts, the zero-based index left to details.index.
      expect(error.message).toMatch(/^Input part 2 of 2 is not a valid (text|image|file) part/);
    }
  });

  it('accepts images inline or by path and file references as submitted, for the runtime to check', () => {
    const input = [
      { type: 'text', text: 'look' },
      { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'image', path: 'screenshots/failing.png' },
      { type: 'file', path: 'src/index.ts' },
    ];
    expect(parseCommand({ type: 'submit_turn', commandId: 'c', sessionId, input })).toMatchObject({ input });
  });
});

describe('AgentError', () => {
  it('serialises, survives duplicated package copies, and maps every code once', () => {
    const error = new AgentError({ code: 'provider_api_error', message: 'API failed', details: { httpStatus: 500 } });
    expect(error.toObject()).toEqual({
      code: 'provider_api_error',
      message: 'API failed',
      retryable: true,
      details: { httpStatus: 500 },
    });
    expect(AgentError.isInstance({ ...error, [Symbol.for('tether.agent-error')]: true })).toBe(true);
    expect(AgentError.isInstance(new Error('x'))).toBe(false);
    expect(AgentError.fromObject(error.toObject()).code).toBe('provider_api_error');
    for (const code of Object.keys(errorCodeTable) as (keyof typeof errorCodeTable)[]) {
      expect(httpStatusForCode(code)).toBeGreaterThanOrEqual(400);
      expect([1, 2]).toContain(exitCodeForCode(code));
    }
  });
});
