import { z } from 'zod';
import { SerializedAgentError } from './errors/agent-error.js';

/**
 * What a provider can do, declared up front so a host can decide before calling. A command that
 * needs a missing capability is refused with capability_unsupported.
 */
export const ProviderCapabilities = z.looseObject({
  /** Continue a conversation in a new process (after a restart or a closed session). */
  resume: z.boolean(),
  interrupt: z.boolean(),
  approvals: z.boolean(),
  questions: z.boolean(),
  controls: z.boolean(),
  usage: z.boolean(),
  setModel: z.boolean(),
  setMode: z.boolean(),
  /** fork_session: a new session from a copy of the conversation. */
  fork: z.boolean(),
  /** rewind_session: the conversation back to before a run. */
  rewind: z.boolean(),
  /** rewind_session with files: the workspace's files back too (when the session's fileCheckpointing is on). */
  rewindFiles: z.boolean(),
  /** Image input parts. */
  images: z.boolean(),
  /** The agent's model list (GET /v1/providers/:name/models). */
  modelList: z.boolean(),
  /** The agent's own cost report (get_session_cost); absent: as `usage`. False for the Claude sdk transport. */
  sessionCost: z.boolean().optional(),
  /** Input part types a turn may carry. */
  inputParts: z.array(z.string()),
  /** submit_turn with delivery steer (the session's doSteer); absent: false. */
  steer: z.boolean().optional(),
  /** The account's plan limits (session.limits_changed parts); absent: false. */
  planLimits: z.boolean().optional(),
  /** Per-session budgets (maxCostUsd, maxTurns) enforced by the agent; absent: false. */
  budgets: z.boolean().optional(),
});
export type ProviderCapabilities = z.infer<typeof ProviderCapabilities>;

/** The result of an availability probe: which agent binary would run, and its version. */
export const ProviderAvailability = z.looseObject({
  available: z.boolean(),
  binaryPath: z.string().optional(),
  /** How the executable was found, e.g. "option", "environment", "path", "bundled". */
  source: z.string().optional(),
  version: z.string().optional(),
  /** How the provider reaches its agent, when it has more than one way (Claude: "cli" or "sdk"). */
  transport: z.string().optional(),
  /** The library the transport runs on and its version, when it uses one (Claude sdk: the Agent SDK). */
  library: z.strictObject({ name: z.string(), version: z.string().optional() }).optional(),
  /** Why it is not available, with what to do. */
  problem: SerializedAgentError.optional(),
});
export type ProviderAvailability = z.infer<typeof ProviderAvailability>;

/** A provider as the daemon describes it (GET /v1/providers). */
export const ProviderDescription = z.looseObject({
  name: z.string(),
  capabilities: ProviderCapabilities,
  availability: ProviderAvailability,
});
export type ProviderDescription = z.infer<typeof ProviderDescription>;
