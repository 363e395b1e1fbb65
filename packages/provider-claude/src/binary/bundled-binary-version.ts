import { statSync } from 'node:fs';
import path from 'node:path';
import { readAgentSdkManifest } from '../sdk/load-agent-sdk.js';
import { readPackageManifest } from '../versions/package-manifest.js';
import { bundledBinaryPackage, bundledBinaryPath } from './resolve-binary.js';

function sameFile(left: string, right: string): boolean {
  try {
    const one = statSync(left);
    const other = statSync(right);
    return one.dev === other.dev && one.ino === other.ino;
  } catch {
    return false;
  }
}

/**
 * The version of the claude binary the Agent SDK's platform package ships, read from the packages'
 * manifests instead of by running `claude --version`: on a host's first start that run was a second
 * claude process beside the agent's own, competing with its start-up for the same cores. Only for
 * that very file (the bundled path, or a link to it), and only when the platform package is the
 * installed SDK's own release (the same version), whose manifest names the Claude Code version it
 * carries (`claudeCodeVersion`; a test holds it against the binary's own answer). Undefined
 * otherwise: then the binary is asked.
 */
export function bundledBinaryVersion(binaryPath: string): string | undefined {
  const bundled = bundledBinaryPath();
  if (bundled === undefined || !sameFile(binaryPath, bundled)) return undefined;
  const platform = readPackageManifest(path.join(path.dirname(bundled), 'package.json'), bundledBinaryPackage);
  const platformVersion = platform?.['version'];
  const sdk = readAgentSdkManifest();
  if (typeof platformVersion !== 'string' || sdk?.['version'] !== platformVersion) return undefined;
  const version = sdk['claudeCodeVersion'];
  return typeof version === 'string' && /^\d+\.\d+\.\d+/.test(version) ? version.slice(0, 100) : undefined;
}
