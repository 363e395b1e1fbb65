import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CLAUDE_AGENT_SDK_VERSION,
  claudeAgentSdkPackage,
  claudeAgentSdkVersionRange,
  isSupportedAgentSdkVersion,
  loadAgentSdk,
  readInstalledAgentSdkVersion,
} from './load-agent-sdk.js';

function notFound(): Error {
  return Object.assign(new Error(`Cannot find package '${claudeAgentSdkPackage}' imported from /somewhere/secret`), {
    code: 'ERR_MODULE_NOT_FOUND',
  });
}

/** `>=0.3.332 <0.4` as numbers: [major, minor, patch] bounds. */
function inWindow(version: string): boolean {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return major === 0 && minor === 3 && patch >= 332;
}

describe('loading the Agent SDK', () => {
  it('not installed: a retryable provider_unavailable that names the package and the versions to install', async () => {
    const error = await loadAgentSdk(() => Promise.reject(notFound())).catch((reason: unknown) => reason);
    expect(error).toMatchObject({
      code: 'provider_unavailable',
      retryable: true,
      details: { reason: 'sdk_not_installed' },
    });
    expect((error as Error).message).toContain(`npm install ${claudeAgentSdkPackage}@'${claudeAgentSdkVersionRange}'`);
    expect((error as Error).message).not.toContain('/somewhere/secret');
  });

  it('installed but broken, or without query(): provider_unavailable with its own reason', async () => {
    expect(
      await loadAgentSdk(() => Promise.reject(new SyntaxError('bad module'))).catch((reason: unknown) => reason),
    ).toMatchObject({ code: 'provider_unavailable', details: { reason: 'sdk_load_failed' } });
    expect(
      await loadAgentSdk(() => Promise.resolve({ startup() {} })).catch((reason: unknown) => reason),
    ).toMatchObject({ code: 'provider_unavailable', details: { reason: 'sdk_query_missing' } });
  });

  it("loads the installed SDK's query()", async () => {
    expect(typeof (await loadAgentSdk()).query).toBe('function');
  });

  it('refuses an installed SDK outside the tested window, naming the version found and the window', async () => {
    const loaded = () => Promise.resolve({ query() {} });
    for (const version of ['0.4.0', '0.3.331', '1.0.0', 'next']) {
      const error = await loadAgentSdk(loaded, () => version).catch((reason: unknown) => reason);
      expect(error).toMatchObject({
        code: 'provider_unavailable',
        retryable: true,
        details: { reason: 'sdk_version_unsupported', installedVersion: version },
      });
      expect((error as Error).message).toContain(`${claudeAgentSdkPackage} ${version} is installed`);
      expect((error as Error).message).toContain(claudeAgentSdkVersionRange);
    }
    for (const version of ['0.3.332', '0.3.400'])
      expect(typeof (await loadAgentSdk(loaded, () => version)).query).toBe('function');
    // A version that cannot be read is not held against the SDK.
    expect(typeof (await loadAgentSdk(loaded, () => undefined)).query).toBe('function');
  });

  it("prewarm: the installed SDK's own, or undefined for a module without one (then spares are not parked)", async () => {
    expect(typeof (await loadAgentSdk()).prewarm).toBe('function');
    expect(
      (
        await loadAgentSdk(
          () => Promise.resolve({ query() {} }),
          () => undefined,
        )
      ).prewarm,
    ).toBeUndefined();
  });

  it('the installed SDK is the version the seam was written against, inside the declared peer window', () => {
    const require = createRequire(import.meta.url);
    const entry = require.resolve(claudeAgentSdkPackage);
    const installed = (
      JSON.parse(readFileSync(path.join(path.dirname(entry), 'package.json'), 'utf8')) as { version: string }
    ).version;
    expect(installed).toBe(CLAUDE_AGENT_SDK_VERSION);
    expect(readInstalledAgentSdkVersion()).toBe(installed);
    expect(inWindow(installed)).toBe(true);
    expect(isSupportedAgentSdkVersion(installed)).toBe(true);
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as Record<
      string,
      Record<string, unknown>
    >;
    expect(manifest.peerDependencies?.[claudeAgentSdkPackage]).toBe(claudeAgentSdkVersionRange);
    expect(manifest.peerDependenciesMeta?.[claudeAgentSdkPackage]).toEqual({ optional: true });
    expect(manifest.dependencies?.[claudeAgentSdkPackage]).toBeUndefined();
  });
});
