import { type RefObject, useEffect } from 'react';

const nonTextInputs = new Set(['button', 'checkbox', 'color', 'file', 'image', 'radio', 'range', 'reset', 'submit']);

/**
 * Whether the focused element holds something the person is in the middle of: a text field with a
 * draft in it, a list being chosen from, or another prompt card. An empty field (the composer just
 * after Enter sent the turn) holds nothing to lose.
 */
function busyAt(active: Element | null): boolean {
  if (active === null) return false;
  if (active.closest('.approval-card, .question-card') !== null) return true;
  if (active instanceof HTMLSelectElement) return true;
  if (active instanceof HTMLTextAreaElement) return active.value !== '';
  if (active instanceof HTMLInputElement) return !nonTextInputs.has(active.type) && active.value !== '';
  return active instanceof HTMLElement && active.isContentEditable;
}

/**
 * A prompt card takes the keyboard when it appears, so its shortcuts work at once: most often the
 * person just sent the turn that led to it and the focus is still in the emptied composer. It never
 * takes it from a draft being written or from another card.
 */
export function useFocusOnArrival(card: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    if (!busyAt(document.activeElement)) card.current?.focus();
  }, [card]);
}
