import type { SerializedAgentError } from '@tether/protocol';

/** The result of an availability probe: which agent binary would run, and its version. */
export interface AgentProviderV1Availability {
  readonly available: boolean;
  /** The resolved executable, when one was found. */
  readonly binaryPath?: string;
  /** How the executable was found, e.g. "option", "environment", "path", "bundled". */
  readonly source?: string;
  /** What the executable reported as its version. */
  readonly version?: string;
  /** Why it is not available, with what to do. */
  readonly problem?: SerializedAgentError;
}
