import { existsSync, readFileSync, statSync } from 'node:fs';
import { AgentError } from '@tether/protocol';
import { describe, expect, it } from 'vitest';
import { mcpConfigurationOf, writeMcpConfiguration } from './mcp-configuration.js';

describe("the client's MCP servers as Claude Code's MCP configuration", () => {
  it('stdio, http and sse servers, their environment and headers as objects', () => {
    expect(
      mcpConfigurationOf([
        { name: 'files', command: 'mcp-files', args: ['--root', '/repo'], env: [{ name: 'LEVEL', value: 'debug' }] },
        { type: 'http', name: 'docs', url: 'https://docs.example.test/mcp', headers: [{ name: 'X-Key', value: 'k' }] },
        { type: 'sse', name: 'events', url: 'https://events.example.test/sse', headers: [] },
      ]),
    ).toEqual({
      mcpServers: {
        files: { type: 'stdio', command: 'mcp-files', args: ['--root', '/repo'], env: { LEVEL: 'debug' } },
        docs: { type: 'http', url: 'https://docs.example.test/mcp', headers: { 'X-Key': 'k' } },
        events: { type: 'sse', url: 'https://events.example.test/sse', headers: {} },
      },
    });
  });

  it('refuses another kind of server, or two with one name, before anything is written', () => {
    const refused = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return AgentError.isInstance(error) ? error.code : 'not an AgentError';
      }
      return 'accepted';
    };
    expect(refused(() => mcpConfigurationOf([{ type: 'acp', name: 'x', id: 'y' } as never]))).toBe(
      'capability_unsupported',
    );
    const twice = { name: 'same', command: 'a', args: [], env: [] };
    expect(refused(() => mcpConfigurationOf([twice, twice]))).toBe('invalid_command');
  });

  it('writes the file readable by its owner only, and removes it', async () => {
    expect(await writeMcpConfiguration([])).toBeNull();
    const file = await writeMcpConfiguration([{ name: 'files', command: 'mcp-files', args: [], env: [] }]);
    expect(file).not.toBeNull();
    expect(statSync(file!.path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file!.path, 'utf8')).mcpServers.files.command).toBe('mcp-files');
    await file!.remove();
    expect(existsSync(file!.path)).toBe(false);
  });
});
