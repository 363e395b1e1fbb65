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
  // Listened for on the document: the group may render nothing at first (a turn's actions wait for the
  // run to end and the agent's capabilities), and a listener on its element would never be attached.
  useEffect(() => {
    const entered = (event: FocusEvent) => {
      if (event.target instanceof Node && group.current?.contains(event.target)) inside.current = true;
    };
    const left = (event: FocusEvent) => {
      const element = group.current;
      // A removed element's blur is no longer inside: that is the loss this puts right, not a move away.
      if (!element || !(event.target instanceof Node) || !element.contains(event.target)) return;
      if (event.relatedTarget instanceof Node && !element.contains(event.relatedTarget)) inside.current = false;
    };
    document.addEventListener('focusin', entered);
    document.addEventListener('focusout', left);
    return () => {
      document.removeEventListener('focusin', entered);
      document.removeEventListener('focusout', left);
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
