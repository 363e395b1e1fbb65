/**
 * Untrusted text as lines a person reads, its runs of blank lines folded: two or more in a row become
 * one line saying how many. They say nothing, and they push what matters out of view (a command padded
 * with a hundred newlines shows a harmless first line and hides `&& rm …` below the fold). One wording,
 * for the CLI's prompts and the web UI's approval cards alike.
 */
export function foldBlankLineRuns(lines: readonly string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index < lines.length; ) {
    let end = index;
    while (end < lines.length && (lines[end] ?? '').trim() === '') end += 1;
    if (end - index >= 2) {
      kept.push(`… (${end - index} blank lines) …`);
      index = end;
    } else {
      kept.push(lines[index] ?? '');
      index += 1;
    }
  }
  return kept;
}
