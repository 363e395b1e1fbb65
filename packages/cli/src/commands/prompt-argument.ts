import { textInputLengthLimit } from '@tether/protocol';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../usage-error.js';

/** The prompt argument that says "read the prompt from stdin": its text then never shows in `ps`. */
export const promptFromStdin = '-';

/**
 * Refuses a prompt with no text in it (empty, or only whitespace) as a usage error, exit 2, before
 * anything is connected to or recorded: the one check of every command that takes a prompt.
 * `example` is that command's own call with a prompt, for the message.
 */
export function checkPromptText(prompt: string, example: string): void {
  if (prompt.trim().length === 0)
    throw new UsageError(`the prompt is empty. Give the text of the turn, e.g. ${example}.`);
}

/**
 * Refuses `-` as the prompt together with `--answers -`: stdin can carry one of them, and which
 * line was meant for which cannot be told.
 */
export function checkPromptSource(prompt: string, answers: string | undefined): void {
  if (prompt === promptFromStdin && answers === promptFromStdin)
    throw new UsageError(
      'stdin can carry the prompt (-) or the answers (--answers -), not both: give the answers in a file or a FIFO.',
    );
}

/**
 * The prompt's text: the argument itself, or for `-` everything on stdin up to its end, without the
 * trailing line breaks a shell's `echo` or a file's last line adds. Checked as checkPromptText does,
 * and refused past the protocol's text limit before anything is connected to or recorded.
 */
export async function readPrompt(argument: string, context: CliContext, example: string): Promise<string> {
  if (argument !== promptFromStdin) {
    checkPromptText(argument, example);
    return argument;
  }
  if (context.terminal) context.stderr.write('tether: reading the prompt from stdin; end it with Ctrl-D.\n');
  const text = (await readToEnd(context.stdin)).replace(/(\r?\n)+$/, '');
  if (text.trim().length === 0)
    throw new UsageError(
      `the prompt read from stdin is empty. Pipe the text of the turn in, e.g. echo "…" | ${example.replace(/ "[^"]*"$/, ` ${promptFromStdin}`)}.`,
    );
  return text;
}

async function readToEnd(stream: NodeJS.ReadableStream): Promise<string> {
  // Fatal: bytes that are not UTF-8 (a binary file, a Latin-1 one) are refused, not sent as U+FFFD.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = '';
  try {
    for await (const chunk of stream) {
      text += typeof chunk === 'string' ? chunk : decoder.decode(chunk as Buffer, { stream: true });
      // Past the limit the rest is not read: the turn is refused whatever follows.
      if (text.length > textInputLengthLimit) {
        throw new UsageError(
          `the prompt read from stdin is longer than ${textInputLengthLimit.toLocaleString('en-US')} characters. Put the text in a file of the workspace and point the agent at it with --file.`,
        );
      }
    }
    return text + decoder.decode();
  } catch (error) {
    if (!(error instanceof TypeError && (error as NodeJS.ErrnoException).code === 'ERR_ENCODING_INVALID_ENCODED_DATA'))
      throw error;
    throw new UsageError(
      'the prompt read from stdin is not UTF-8 text (a binary file, or text in another encoding?). Convert it to UTF-8 first (e.g. iconv -f LATIN1 -t UTF-8), or put the file in the workspace and point the agent at it with --file.',
    );
  }
}
