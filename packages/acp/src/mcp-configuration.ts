import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { McpServer } from '@agentclientprotocol/sdk';
import { AgentError } from '@tether/protocol';

function pairs(entries: readonly { name: string; value: string }[]): Record<string, string> {
  return Object.fromEntries(entries.map((entry) => [entry.name, entry.value]));
}

/**
 * The client's MCP servers as Claude Code's MCP configuration (`--mcp-config`): stdio, HTTP and
 * SSE servers. Any other kind, or two servers with one name, is refused before the session opens.
 */
export function mcpConfigurationOf(servers: readonly McpServer[]): { mcpServers: Record<string, unknown> } {
  const mcpServers: Record<string, unknown> = {};
  for (const server of servers) {
    if (Object.hasOwn(mcpServers, server.name)) {
      throw new AgentError({
        code: 'invalid_command',
        message: `Two MCP servers are named "${server.name}"; give each server its own name.`,
      });
    }
    const kind = 'type' in server ? (server as { type: unknown }).type : 'stdio';
    if (kind === 'http' || kind === 'sse') {
      const remote = server as Extract<McpServer, { type: 'http' }>;
      mcpServers[server.name] = { type: kind, url: remote.url, headers: pairs(remote.headers) };
    } else if (kind === 'stdio' && 'command' in server) {
      mcpServers[server.name] = { type: 'stdio', command: server.command, args: server.args, env: pairs(server.env) };
    } else {
      throw new AgentError({
        code: 'capability_unsupported',
        message: `The MCP server "${server.name}" is of kind ${String(kind)}; Tether passes stdio, http and sse servers to the agent.`,
      });
    }
  }
  return { mcpServers };
}

/** A session's MCP configuration on disk: readable by this user only (it may hold tokens), removed with the session. */
export interface McpConfigurationFile {
  readonly path: string;
  remove(): Promise<void>;
}

export async function writeMcpConfiguration(servers: readonly McpServer[]): Promise<McpConfigurationFile | null> {
  if (servers.length === 0) return null;
  const configuration = mcpConfigurationOf(servers);
  // mkdtemp makes the directory 0700: no other user can read the file or swap it before the agent does.
  const directory = await mkdtemp(path.join(os.tmpdir(), 'tether-acp-mcp-'));
  const file = path.join(directory, 'mcp.json');
  await writeFile(file, JSON.stringify(configuration), { mode: 0o600 });
  return {
    path: file,
    remove: () => rm(directory, { recursive: true, force: true }),
  };
}
