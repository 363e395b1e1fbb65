import type { AgentProviderV1Capabilities } from '@tether/provider-spec';
import type { ClaudeTransport } from './connection/claude-connection.js';

/** The cli transport: everything the claude CLI's control protocol offers. */
export const claudeCapabilities: AgentProviderV1Capabilities = Object.freeze({
  resume: true,
  interrupt: true,
  approvals: true,
  questions: true,
  controls: true,
  usage: true,
  sessionCost: true,
  setModel: true,
  setMode: true,
  // Proven on both transports by tests/conformance/fork-and-rewind.test.ts.
  fork: true,
  rewind: true,
  rewindFiles: true,
  images: true,
  modelList: true,
  inputParts: ['text', 'image', 'file'],
  // Proven on both transports by tests/conformance/follow-ups-steer.test.ts and limits-and-budgets.test.ts.
  steer: true,
  planLimits: true,
  budgets: true,
});

/**
 * The sdk transport: the same, less what the Agent SDK's Query has no method for. Its interrupt()
 * asks for cancel_queued through an argument sdk.d.ts does not declare; an SDK that ignores it gives
 * the older receipt rules (docs/providers.md).
 */
export const claudeSdkCapabilities: AgentProviderV1Capabilities = Object.freeze({
  ...claudeCapabilities,
  sessionCost: false,
});

export const claudeTransportCapabilities: Readonly<Record<ClaudeTransport, AgentProviderV1Capabilities>> =
  Object.freeze({
    cli: claudeCapabilities,
    sdk: claudeSdkCapabilities,
  });
