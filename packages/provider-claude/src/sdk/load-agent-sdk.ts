import { AgentError } from '@tether/protocol';
import type { AgentSdkQueryFunction } from './agent-sdk-types.js';

/** The Agent SDK version the sdk transport was written and tested against. */
export const CLAUDE_AGENT_SDK_VERSION = '0.3.332';
/** The optional peer dependency and the versions it is declared (and tested) for. */
export const claudeAgentSdkPackage = '@anthropic-ai/claude-agent-sdk';
export const claudeAgentSdkVersionRange = '>=0.3.332 <0.4';

/** Resolves with the SDK's module namespace; rejects when it cannot be loaded. */
export type AgentSdkLoader = () => Promise<unknown>;

/**
 * Loads the SDK only when an sdk-transport session needs it. The specifier is not a literal, so
 * neither the build nor the cli transport ever needs the package to be installed.
 */
export const importAgentSdk: AgentSdkLoader = () => {
  const specifier: string = claudeAgentSdkPackage;
  return import(specifier);
};

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

function unavailable(reason: 'sdk_not_installed' | 'sdk_load_failed' | 'sdk_query_missing'): AgentError {
  const install = `npm install ${claudeAgentSdkPackage}@'${claudeAgentSdkVersionRange}'`;
  const message =
    reason === 'sdk_not_installed'
      ? `The sdk transport needs ${claudeAgentSdkPackage} (${claudeAgentSdkVersionRange}), which is not installed. Install it next to Tether (${install}), or use transport 'cli'.`
      : reason === 'sdk_load_failed'
        ? `${claudeAgentSdkPackage} is installed but could not be loaded. Reinstall it (${install}), or use transport 'cli'.`
        : `${claudeAgentSdkPackage} has no query() export; the sdk transport needs ${claudeAgentSdkVersionRange}. Install a version in that range (${install}), or use transport 'cli'.`;
  // Retryable: installing the package (or fixing it) is all it takes; nothing was started.
  return new AgentError({ code: 'provider_unavailable', message, retryable: true, details: { reason } });
}

/** The SDK's query() function, or provider_unavailable saying which package to install. */
export async function loadAgentSdkQuery(load: AgentSdkLoader = importAgentSdk): Promise<AgentSdkQueryFunction> {
  let namespace: unknown;
  try {
    namespace = await load();
  } catch (error) {
    throw unavailable(isModuleNotFound(error) ? 'sdk_not_installed' : 'sdk_load_failed');
  }
  const query = (namespace as { query?: unknown } | null)?.query;
  if (typeof query !== 'function') throw unavailable('sdk_query_missing');
  return query as AgentSdkQueryFunction;
}
