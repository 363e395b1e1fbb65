// CSI, OSC and single-character escape sequences: what a terminal would act on rather than show.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching terminal escapes is the point.
const terminalEscapes = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[@-Z\\-_])/g;

/** `text` without terminal escape sequences (control characters outside them are the caller's choice). */
export function stripTerminalEscapes(text: string): string {
  return text.replace(terminalEscapes, '');
}
