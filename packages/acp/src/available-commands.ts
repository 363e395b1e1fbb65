import type { AvailableCommand } from '@agentclientprotocol/sdk';
import type { ControlName } from '@tether/protocol';

/** Tether's controls as the client's slash commands (the model is a config option, not a command). */
const descriptions: Record<Exclude<ControlName, 'model'>, { description: string; hint?: string }> = {
  compact: { description: 'Summarise the conversation to free context', hint: 'what to keep (optional)' },
  clear: { description: 'Start the conversation afresh in this session' },
  cost: { description: "Show the session's cost" },
  context: { description: 'Show how the context window is used' },
  review: { description: 'Review the changes in the workspace', hint: 'what to review (optional)' },
  'security-review': { description: 'Review the changes for security problems' },
  init: { description: 'Write a CLAUDE.md describing the project' },
  'pr-comments': { description: "Show a pull request's comments", hint: 'pull request (optional)' },
};

export function availableCommands(): AvailableCommand[] {
  return Object.entries(descriptions).map(([name, { description, hint }]) => ({
    name,
    description,
    ...(hint ? { input: { hint } } : {}),
  }));
}
