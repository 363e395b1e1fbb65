import { readFileSync } from 'node:fs';

/** A package's package.json, when it can be read and names that package; undefined otherwise. */
export function readPackageManifest(
  manifestPath: string,
  packageName: string,
): Readonly<Record<string, unknown>> | undefined {
  try {
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as unknown;
    return typeof manifest === 'object' && manifest !== null && (manifest as { name?: unknown }).name === packageName
      ? (manifest as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
