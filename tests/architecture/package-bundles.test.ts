import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// What the packages' exports load at run time is esbuild's bundle of tsc's output
// (docs/decisions/2026-12-02-each-package-loads-as-one-file.md); `npm test` builds both first.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bundleFolder = './dist/bundle/';

const bundledEntries = readdirSync(path.join(root, 'packages'))
  .filter((name) => existsSync(path.join(root, 'packages', name, 'package.json')))
  .flatMap((name) => {
    const manifest = JSON.parse(readFileSync(path.join(root, 'packages', name, 'package.json'), 'utf8'));
    return Object.entries<{ default?: string }>(manifest.exports ?? {}).flatMap(([entry, target]) =>
      target.default?.startsWith(bundleFolder)
        ? [{ name, entry, file: target.default.slice(bundleFolder.length) }]
        : [],
    );
  });

const exportedNames = async (file: string): Promise<string[]> =>
  Object.keys(await import(pathToFileURL(file).href)).sort();

describe('package bundles', () => {
  it('bundles the packages a host runs, not the testkit or the web UI', () => {
    const names = new Set(bundledEntries.map(({ name }) => name));
    expect(names).toContain('runtime');
    expect(names).toContain('provider-claude');
    expect(names).toContain('cli');
    expect(names).not.toContain('testkit');
    expect(names).not.toContain('web');
  });

  for (const { name, entry, file } of bundledEntries) {
    it(`@tether/${name} ${entry}: the bundle exports exactly what tsc's output does`, async () => {
      const folder = path.join(root, 'packages', name, 'dist');
      const bundled = await exportedNames(path.join(folder, 'bundle', file));
      expect(bundled.length).toBeGreaterThan(0);
      expect(bundled).toEqual(await exportedNames(path.join(folder, file)));
    });
  }
});
