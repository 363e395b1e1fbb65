import { ProviderAvailability, SerializedAgentError, SessionSnapshot } from '@tether/protocol';
import { z } from 'zod';

/** Response shapes of the daemon's own routes (commands, events and snapshots come from the protocol). */
export const ErrorResponse = z.strictObject({ error: SerializedAgentError });

export const SessionPage = z.strictObject({
  sessions: z.array(SessionSnapshot),
  /** Pass as ?before= for the next (older) page; null on the last page. */
  next: z.string().nullable(),
});

export const ProviderList = z.strictObject({
  providers: z.array(
    z.strictObject({
      name: z.string(),
      capabilities: z.record(z.string(), z.unknown()),
      availability: ProviderAvailability,
    }),
  ),
});

export const Health = z.strictObject({ ok: z.literal(true), version: z.string() });

/** /health's 503: the daemon is there, but its store cannot reach its database (TetherStore.health). */
export const Unhealthy = z.strictObject({
  ok: z.literal(false),
  version: z.string(),
  store: z.strictObject({
    kind: z.string(),
    reason: z.string().optional(),
    cause: z.string().optional(),
    message: z.string().optional(),
    since: z.string().optional(),
  }),
});
