import type { ConnectionListener } from './claude-connection.js';

/**
 * A listener that keeps what its connection says until open(), then hands it on in order and
 * passes everything through: an agent started while the binary's version check is still out is
 * not the session's yet, and nothing it says meanwhile may be lost. Never opened, it drops it all.
 */
export function heldListener(target: ConnectionListener): { listener: ConnectionListener; open(): void } {
  let held: (() => void)[] | null = [];
  return {
    listener: {
      onFrame: (frame) => (held ? held.push(() => target.onFrame(frame)) : target.onFrame(frame)),
      onNote: (code) => (held ? held.push(() => target.onNote(code)) : target.onNote(code)),
      onPrompt: (requestId, request) =>
        held ? held.push(() => target.onPrompt(requestId, request)) : target.onPrompt(requestId, request),
      onPromptWithdrawn: (requestId) =>
        held ? held.push(() => target.onPromptWithdrawn(requestId)) : target.onPromptWithdrawn(requestId),
      onInputFailed: () => (held ? held.push(() => target.onInputFailed()) : target.onInputFailed()),
      onEnd: (ending) => (held ? held.push(() => target.onEnd(ending)) : target.onEnd(ending)),
    },
    open() {
      const calls = held ?? [];
      held = null;
      for (const call of calls) call();
    },
  };
}
