/**
 * A provider whose sessions report each part they emit to `onEmit(sessionId, part)` first: the
 * moment a CLI line was translated, before the runtime persisted and published it. Only the emit
 * callback is wrapped; everything else is the provider itself.
 */
export function observeEmits(provider, onEmit) {
  return {
    ...provider,
    doOpenSession: (options) =>
      provider.doOpenSession({
        ...options,
        emit: (part) => {
          onEmit(options.sessionId, part);
          options.emit(part);
        },
      }),
  };
}
