/**
 * Checks `condition` every `intervalMs` until it holds or `timeoutMs` has passed; true when it
 * held. For facts nothing announces (another process's exit is not an event Node can wait on).
 * The timers keep the event loop alive on purpose: a bounded wait during shutdown should finish.
 */
export async function pollUntil(
  condition: () => boolean,
  options: { readonly timeoutMs: number; readonly intervalMs?: number },
): Promise<boolean> {
  const deadline = Date.now() + Math.max(0, options.timeoutMs);
  const intervalMs = options.intervalMs ?? 20;
  for (;;) {
    if (condition()) return true;
    const remaining = deadline - Date.now();
    if (remaining <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, remaining)));
  }
}

/** What `probe` finds, polling (bounded); rejects when it finds nothing within `timeoutMs` (default 20 s). */
export async function pollFor<Value>(
  probe: () => Value | undefined,
  options: { readonly timeoutMs?: number } = {},
): Promise<Value> {
  let value: Value | undefined;
  const found = await pollUntil(
    () => {
      value = probe();
      return value !== undefined;
    },
    { timeoutMs: options.timeoutMs ?? 20_000 },
  );
  if (!found || value === undefined) throw new Error('Timed out polling for a process fact.');
  return value;
}
