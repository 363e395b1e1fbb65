import path from 'node:path';
import type { PermissionMode, SessionConfiguration } from '@tether/protocol';
import type { AgentProviderV1SessionOptions } from '@tether/provider-spec';
import type { ClaudeSessionSettings } from './claude-session-settings.js';

/**
 * The mode a claim carries (claim_session's permission_mode): any but bypass, which only a process
 * launched in it can take (../shared/claude-cli-protocol-wave2.md §8); a bypass session's spare is
 * launched in it instead.
 */
export function claimablePermissionMode(configuration: SessionConfiguration): PermissionMode | undefined {
  return configuration.permissionMode === 'bypass' ? undefined : configuration.permissionMode;
}

/** What a parked spare is launched with: the session's configuration without what its claim carries. */
export function parkedConfiguration(configuration: SessionConfiguration): SessionConfiguration {
  if (claimablePermissionMode(configuration) === undefined) return configuration;
  const { permissionMode: _claimed, ...launched } = configuration;
  return launched;
}

/**
 * Whether a process started in the parking folder reads the same at start-up as one started in the
 * session's: a named agent may be the folder's own, and a relative path resolves against the cwd.
 * Everything else a start-up reads (flags, the environment) is in the key, so only identical ones share.
 */
function parkable(configuration: SessionConfiguration): boolean {
  const paths = [
    configuration.settingsPath,
    configuration.mcpConfigPath,
    ...(configuration.additionalDirectories ?? []),
  ].filter((value) => value !== undefined);
  return configuration.agent === undefined && paths.every((value) => path.isAbsolute(value));
}

/**
 * The spares a session can take, or null when none can serve it. Parked spares (cli, and sdk through
 * the SDK's prewarm()) are shared by every folder: the folder and the claimable mode are not in the
 * key. Otherwise (sdk with an injected query()) spares start in the session's own folder, so only
 * sessions in that folder share them.
 */
export function spareKey(
  options: AgentProviderV1SessionOptions,
  settings: ClaudeSessionSettings,
  configuration: SessionConfiguration,
  parking: boolean,
): string | null {
  if (!parking)
    return JSON.stringify([
      settings.transport,
      settings.binaryPath,
      options.workspace.path,
      options.ephemeral,
      configuration,
    ]);
  if (!parkable(configuration)) return null;
  return JSON.stringify([
    settings.transport,
    settings.binaryPath,
    options.ephemeral,
    parkedConfiguration(configuration),
  ]);
}
