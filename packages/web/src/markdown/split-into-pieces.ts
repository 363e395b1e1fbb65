const fenceLine = /^ {0,3}(`{3,}|~{3,})(.*)$/;

/**
 * Cuts Markdown into pieces of at least `minimumLength` characters (but the last), only where a
 * blank line is followed by a line that starts at column 0 outside fenced code: there a new
 * top-level block begins whatever came before, so the pieces render as the whole does. The UI
 * renders each piece on its own and keeps the finished ones while an answer streams, so a delta
 * costs a parse of the last piece, not of the whole answer. A cut depends only on the text before
 * it, so the pieces before the last stay the same as the text grows. (Indented lines stay with the
 * list item they continue. Cost: a reference-style link or footnote defined in another piece shows
 * as text.)
 */
export function splitIntoPieces(text: string, minimumLength: number): string[] {
  return markdownPieces(text, minimumLength).pieces;
}

/**
 * splitIntoPieces, and whether the text ends inside a fenced block not closed yet (an answer still
 * streaming its code): its last piece is then highlighted only once the fence closes, rather than
 * re-coloured whole for every delta (a 100 kB block made typing lag by hundreds of milliseconds).
 */
export function markdownPieces(text: string, minimumLength: number): { pieces: string[]; endsInOpenFence: boolean } {
  const lines = text.split('\n');
  const pieces: string[] = [];
  let start = 0;
  let length = 0;
  let fence: string | null = null;
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index]!;
    const marker = fenceLine.exec(line);
    if (fence === null) {
      if (marker) fence = marker[1]!;
      else if (
        length >= minimumLength &&
        index > start &&
        lines[index - 1]!.trim() === '' &&
        line !== '' &&
        !/^\s/.test(line)
      ) {
        pieces.push(lines.slice(start, index).join('\n'));
        start = index;
        length = 0;
      }
    } else if (marker && marker[1]![0] === fence[0] && marker[1]!.length >= fence.length && marker[2]!.trim() === '') {
      fence = null;
    }
    length += line.length + 1;
  }
  pieces.push(lines.slice(start).join('\n'));
  return { pieces, endsInOpenFence: fence !== null };
}
