import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';

/** What an ACP client shows of a tool call: derived from the tool's name and the input the model gave it. */
export interface ToolCallDescription {
  readonly title: string;
  readonly kind: ToolKind;
  readonly locations: ToolCallLocation[];
  readonly content: ToolCallContent[];
}

type Input = Readonly<Record<string, unknown>>;

function text(input: Input | undefined, key: string): string | undefined {
  const value = input?.[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function textContent(value: string): ToolCallContent {
  return { type: 'content', content: { type: 'text', text: value } };
}

function fileLocation(input: Input | undefined, key = 'file_path'): ToolCallLocation[] {
  const filePath = text(input, key);
  return filePath ? [{ path: filePath }] : [];
}

/** Edit, MultiEdit and Write carry the old and new text: the client shows them as diffs. */
function editDiffs(toolName: string, input: Input | undefined): ToolCallContent[] {
  const filePath = text(input, 'file_path');
  if (!filePath || !input) return [];
  if (toolName === 'Write' && typeof input.content === 'string') {
    return [{ type: 'diff', path: filePath, oldText: null, newText: input.content }];
  }
  if (toolName === 'Edit' && typeof input.new_string === 'string') {
    return [{ type: 'diff', path: filePath, oldText: text(input, 'old_string') ?? null, newText: input.new_string }];
  }
  if (toolName === 'MultiEdit' && Array.isArray(input.edits)) {
    return input.edits.flatMap((edit: unknown): ToolCallContent[] => {
      const { old_string: oldText, new_string: newText } = (edit ?? {}) as Record<string, unknown>;
      if (typeof newText !== 'string') return [];
      return [{ type: 'diff', path: filePath, oldText: typeof oldText === 'string' ? oldText : null, newText }];
    });
  }
  return [];
}

/**
 * The title, kind, locations and content of a tool call. Input absent (too large to carry, or
 * not known yet) gives the tool's name and kind only.
 */
export function describeToolCall(toolName: string, input: Input | undefined): ToolCallDescription {
  const none = { locations: [], content: [] };
  switch (toolName) {
    case 'Bash': {
      const description = text(input, 'description');
      return {
        title: text(input, 'command') ?? 'Terminal',
        kind: 'execute',
        locations: [],
        content: description ? [textContent(description)] : [],
      };
    }
    case 'Read':
      return {
        title: `Read ${text(input, 'file_path') ?? 'file'}`,
        kind: 'read',
        ...none,
        locations: fileLocation(input),
      };
    case 'Write':
    case 'Edit':
    case 'MultiEdit':
      return {
        title: `${toolName === 'Write' ? 'Write' : 'Edit'} ${text(input, 'file_path') ?? 'file'}`,
        kind: 'edit',
        locations: fileLocation(input),
        content: editDiffs(toolName, input),
      };
    case 'NotebookEdit':
      return {
        title: `Edit ${text(input, 'notebook_path') ?? 'notebook'}`,
        kind: 'edit',
        ...none,
        locations: fileLocation(input, 'notebook_path'),
      };
    case 'Glob':
    case 'Grep':
      return {
        title: [toolName === 'Glob' ? 'Find' : 'Search', text(input, 'pattern'), text(input, 'path')]
          .filter((part) => part !== undefined)
          .join(' '),
        kind: 'search',
        ...none,
        locations: fileLocation(input, 'path'),
      };
    case 'WebFetch':
      return { title: `Fetch ${text(input, 'url') ?? ''}`.trim(), kind: 'fetch', ...none };
    case 'WebSearch':
      return { title: `Search the web: ${text(input, 'query') ?? ''}`.trim(), kind: 'fetch', ...none };
    case 'Task':
    case 'Agent':
      return { title: text(input, 'description') ?? toolName, kind: 'think', ...none };
    case 'ExitPlanMode': {
      const plan = text(input, 'plan');
      return { title: 'Leave plan mode', kind: 'switch_mode', locations: [], content: plan ? [textContent(plan)] : [] };
    }
    default:
      return { title: toolName, kind: 'other', ...none };
  }
}
