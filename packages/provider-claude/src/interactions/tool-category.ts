import type { ToolCategory } from '@tether/protocol';

const categories: Record<string, ToolCategory> = {
  Bash: 'command',
  BashOutput: 'command',
  KillShell: 'command',
  Read: 'file_read',
  Glob: 'file_read',
  Grep: 'file_read',
  LS: 'file_read',
  NotebookRead: 'file_read',
  Write: 'file_write',
  Edit: 'file_write',
  MultiEdit: 'file_write',
  NotebookEdit: 'file_write',
  WebFetch: 'network',
  WebSearch: 'network',
};

/** The neutral category of a Claude Code tool, for hosts that show or decide by kind. */
export function toolCategory(toolName: string): ToolCategory {
  if (toolName.startsWith('mcp__')) return 'mcp';
  return categories[toolName] ?? 'other';
}
