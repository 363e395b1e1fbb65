/**
 * What a provider can do, declared up front so a host (and the runtime) can decide before
 * calling. A command that needs a missing capability is refused with capability_unsupported.
 */
export interface AgentProviderV1Capabilities {
  /** Continue a conversation in a new process (after a restart or a closed session). */
  readonly resume: boolean;
  readonly interrupt: boolean;
  readonly approvals: boolean;
  readonly questions: boolean;
  readonly controls: boolean;
  readonly usage: boolean;
  readonly setModel: boolean;
  readonly setMode: boolean;
  readonly fork: boolean;
  readonly rollback: boolean;
  /** Input part types accepted by doTurn. */
  readonly inputParts: readonly 'text'[];
}
