// Bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069). A terminal or a
// browser lays text out by them, so text holding them can show in an order other than the one it is
// in ("Trojan Source"): a command shown for approval, or a line of a diff, would read as something
// other than what runs. Hosts write them out rather than remove them: that the model sent one is worth seeing.
// The embeddings, overrides and isolates (U+202A-E, U+2066-9), and the marks (U+200E, U+200F, U+061C),
// which reorder the neutral characters around them.
const bidirectionalControls = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

/** `text` with each bidirectional control written out as `<U+202E>`, so it shows in its own order. */
export function writeOutBidirectionalControls(text: string): string {
  return text.replace(
    bidirectionalControls,
    (character) => `<U+${character.charCodeAt(0).toString(16).toUpperCase()}>`,
  );
}
