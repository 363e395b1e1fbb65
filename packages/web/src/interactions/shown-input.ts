import { foldBlankLineRuns, writeOutBidirectionalControls } from '@tether/protocol';

// Tool input is model-authored: shown as text, bounded so a huge input cannot stall the page, with its
// bidirectional controls written out so it reads in the order it runs, and its runs of blank lines
// folded so what runs last stays in view.
const maxShown = 20_000;

/**
 * A piece of tool input as the approval card shows it (the input sent is untouched). Markdown (a plan)
 * keeps its blank lines: they separate its paragraphs, and it never shows a run of them anyway.
 */
export function shownInput(text: string, { markdown = false }: { readonly markdown?: boolean } = {}): string {
  const written = writeOutBidirectionalControls(text);
  const shown = markdown ? written : foldBlankLineRuns(written.split('\n')).join('\n');
  return shown.length > maxShown
    ? `${shown.slice(0, maxShown)}\n… (${(shown.length - maxShown).toLocaleString('en')} more characters)`
    : shown;
}
