import { type RefObject, useEffect, useLayoutEffect, useRef } from 'react';

const focusable = 'input:not([disabled]), textarea:not([disabled]), select:not([disabled]), button:not([disabled])';

/**
 * Keeps the keyboard in `group` when what it shows changes under the focus: a button replaced by its
 * confirmation, Close by Reopen, an answered card gone. The focus would otherwise fall to the page's
 * body, and a keyboard or screen-reader user would lose their place. `shown` names what the group
 * shows now (a button disabled while its action runs counts: it drops the focus too); the focus goes
 * to its first control that can take it.
 * Only a focus lost to the body is put back: one the person moved elsewhere stays there.
 */
export function useFocusKeptIn(group: RefObject<HTMLElement | null>, shown: string): void {
  const inside = useRef(false);
  useEffect(() => {
    const element = group.current;
    if (!element) return;
    const entered = () => {
      inside.current = true;
    };
    const left = (event: FocusEvent) => {
      // A removed element's blur names no target: that is the loss this puts right, not a move away.
      if (event.relatedTarget instanceof Node && !element.contains(event.relatedTarget)) inside.current = false;
    };
    element.addEventListener('focusin', entered);
    element.addEventListener('focusout', left);
    return () => {
      element.removeEventListener('focusin', entered);
      element.removeEventListener('focusout', left);
    };
  }, [group]);
  useLayoutEffect(() => {
    const element = group.current;
    if (!inside.current || (document.activeElement !== document.body && document.activeElement !== null)) return;
    // None yet (all disabled while an action is under way): the next change puts it back.
    const target = element?.querySelector<HTMLElement>(focusable);
    if (!target) return;
    inside.current = false;
    target.focus();
  }, [group, shown]);
}
