// What the composer holds for each session while the reader is elsewhere: kept in this tab's memory,
// and in its sessionStorage so a reload keeps it too. Like the token, never in localStorage (it would
// outlive the tab and reach every tab) and never sent anywhere until the reader sends it as a turn.
const prefix = 'tether.draft.';
const drafts = new Map<string, string>();

export function readDraft(sessionId: string): string {
  const held = drafts.get(sessionId);
  if (held !== undefined) return held;
  try {
    return sessionStorage.getItem(prefix + sessionId) ?? '';
  } catch {
    return '';
  }
}

/** Keeps the draft; an empty one is forgotten. */
export function storeDraft(sessionId: string, text: string): void {
  if (text === '') drafts.delete(sessionId);
  else drafts.set(sessionId, text);
  try {
    if (text === '') sessionStorage.removeItem(prefix + sessionId);
    else sessionStorage.setItem(prefix + sessionId, text);
  } catch {
    // Storage refused (private mode, quota): the draft then lasts as long as the page.
  }
}

/** Every draft of this tab, gone (signing out). */
export function forgetDrafts(): void {
  drafts.clear();
  try {
    for (const key of Object.keys(sessionStorage)) if (key.startsWith(prefix)) sessionStorage.removeItem(key);
  } catch {
    // Nothing stored.
  }
}
