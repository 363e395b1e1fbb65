import type { ProviderAvailability } from '@tether/protocol';

/** The result of an availability probe: which agent binary would run, and its version. */
export type AgentProviderV1Availability = Readonly<ProviderAvailability>;
