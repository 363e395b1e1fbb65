import { UsageError } from '../usage-error.js';

/**
 * Refuses a prompt with no text in it (empty, or only whitespace) as a usage error, exit 2, before
 * anything is connected to or recorded: the one check of every command that takes a prompt.
 * `example` is that command's own call with a prompt, for the message.
 */
export function checkPromptText(prompt: string, example: string): void {
  if (prompt.trim().length === 0)
    throw new UsageError(`the prompt is empty. Give the text of the turn, e.g. ${example}.`);
}
