import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { InteractionAnswer, InteractionRef } from '@tether/protocol';
import { z } from 'zod';

/** One line of --answers: which interaction, and the respond_interaction answer. */
export const AnswerLine = z.strictObject({ ref: InteractionRef, answer: InteractionAnswer });
export type AnswerLine = z.infer<typeof AnswerLine>;

export type ParsedAnswerLine =
  | { readonly ok: true; readonly line: AnswerLine }
  | { readonly ok: false; readonly problem: string };

export function parseAnswerLine(text: string): ParsedAnswerLine | null {
  const trimmed = text.trim();
  if (trimmed.length === 0) return null;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return { ok: false, problem: 'not JSON' };
  }
  const parsed = AnswerLine.safeParse(value);
  if (!parsed.success)
    return {
      ok: false,
      problem: parsed.error.issues
        .map((issue) => `${issue.path.join('.') || '(line)'}: ${issue.message}`)
        .slice(0, 3)
        .join('; '),
    };
  return { ok: true, line: parsed.data };
}

/** Reads answer lines from a file (or a FIFO) or from stdin ("-") as they arrive. */
export function readAnswerLines(
  source: string,
  stdin: NodeJS.ReadableStream,
  onLine: (line: ParsedAnswerLine) => void,
): () => void {
  const input = source === '-' ? stdin : createReadStream(source, { encoding: 'utf8' });
  const lines = createInterface({ input, crlfDelay: Infinity });
  lines.on('line', (text) => {
    const parsed = parseAnswerLine(text);
    if (parsed) onLine(parsed);
  });
  return () => lines.close();
}
