import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentError } from '@tether/protocol';
import { compareVersions, numericCore } from '../versions/compare-versions.js';
import { readPackageManifest } from '../versions/package-manifest.js';
import type { AgentSdkPrewarmFunction, AgentSdkQueryFunction } from './agent-sdk-types.js';

/** The Agent SDK version the sdk transport was written and tested against: the window's floor. */
export const CLAUDE_AGENT_SDK_VERSION = '0.3.332';
/** The first version outside the window (a minor bump of a 0.x package may change the wire). */
const firstUntestedVersion = '0.4.0';
/** The optional peer dependency and the versions it is declared (and tested) for. */
export const claudeAgentSdkPackage = '@anthropic-ai/claude-agent-sdk';
export const claudeAgentSdkVersionRange = `>=${CLAUDE_AGENT_SDK_VERSION} <${firstUntestedVersion.replace(/\.0$/, '')}`;

/** Resolves with the SDK's module namespace; rejects when it cannot be loaded. */
export type AgentSdkLoader = () => Promise<unknown>;
/** The installed SDK's version, or undefined when it cannot be read (then it is not checked). */
export type AgentSdkVersionReader = () => string | undefined;

/**
 * Loads the SDK only when an sdk-transport session needs it. The specifier is not a literal, so
 * neither the build nor the cli transport ever needs the package to be installed.
 */
export const importAgentSdk: AgentSdkLoader = () => {
  const specifier: string = claudeAgentSdkPackage;
  return import(specifier);
};

/** The installed SDK's package.json, read next to its entry point (the package does not export it); undefined when it cannot be read. */
export function readAgentSdkManifest(): Readonly<Record<string, unknown>> | undefined {
  try {
    const entry = fileURLToPath(import.meta.resolve(claudeAgentSdkPackage));
    return readPackageManifest(path.join(path.dirname(entry), 'package.json'), claudeAgentSdkPackage);
  } catch {
    return undefined;
  }
}

/** Reads the version from the package.json next to the SDK's entry point. */
export const readInstalledAgentSdkVersion: AgentSdkVersionReader = () => {
  const version = readAgentSdkManifest()?.['version'];
  return typeof version === 'string' ? version : undefined;
};

/** Whether `version` lies in the declared window (an unparsable one does not). */
export function isSupportedAgentSdkVersion(version: string): boolean {
  const core = numericCore(version);
  return (
    core !== undefined &&
    compareVersions(core, numericCore(CLAUDE_AGENT_SDK_VERSION)!) >= 0 &&
    compareVersions(core, numericCore(firstUntestedVersion)!) < 0
  );
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

type UnavailableReason = 'sdk_not_installed' | 'sdk_load_failed' | 'sdk_query_missing' | 'sdk_version_unsupported';

function unavailable(reason: UnavailableReason, installed?: string): AgentError {
  const install = `npm install ${claudeAgentSdkPackage}@'${claudeAgentSdkVersionRange}'`;
  const messages: Record<UnavailableReason, string> = {
    sdk_not_installed: `The sdk transport needs ${claudeAgentSdkPackage} (${claudeAgentSdkVersionRange}), which is not installed. Install it next to Tether (${install}), or use transport 'cli'.`,
    sdk_load_failed: `${claudeAgentSdkPackage} is installed but could not be loaded. Reinstall it (${install}), or use transport 'cli'.`,
    sdk_query_missing: `${claudeAgentSdkPackage} has no query() export; the sdk transport needs ${claudeAgentSdkVersionRange}. Install a version in that range (${install}), or use transport 'cli'.`,
    sdk_version_unsupported: `${claudeAgentSdkPackage} ${installed} is installed; the sdk transport is tested with ${claudeAgentSdkVersionRange} only. Install a version in that range (${install}), or use transport 'cli'.`,
  };
  // Retryable: installing the package (or fixing it) is all it takes; nothing was started.
  return new AgentError({
    code: 'provider_unavailable',
    message: messages[reason],
    retryable: true,
    details: { reason, ...(installed ? { installedVersion: installed } : {}) },
  });
}

/** What the sdk transport uses of the Agent SDK: query(), and prewarm() when the module has it (parked spares). */
export interface LoadedAgentSdk {
  readonly query: AgentSdkQueryFunction;
  readonly prewarm: AgentSdkPrewarmFunction | undefined;
}

/** The SDK's functions, loaded once; or provider_unavailable saying which package (and version) to install. */
export async function loadAgentSdk(
  load: AgentSdkLoader = importAgentSdk,
  readVersion: AgentSdkVersionReader = readInstalledAgentSdkVersion,
): Promise<LoadedAgentSdk> {
  let namespace: unknown;
  try {
    namespace = await load();
  } catch (error) {
    throw unavailable(isModuleNotFound(error) ? 'sdk_not_installed' : 'sdk_load_failed');
  }
  const { query, prewarm } = (namespace ?? {}) as { query?: unknown; prewarm?: unknown };
  if (typeof query !== 'function') throw unavailable('sdk_query_missing');
  // Checked after loading: what was imported is what the version describes (same resolution).
  const version = readVersion();
  if (version !== undefined && !isSupportedAgentSdkVersion(version))
    throw unavailable('sdk_version_unsupported', version);
  return {
    query: query as AgentSdkQueryFunction,
    // Without it (a module that lacks prewarm) spares are not parked.
    prewarm: typeof prewarm === 'function' ? (prewarm as AgentSdkPrewarmFunction) : undefined,
  };
}
