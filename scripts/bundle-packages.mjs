// Bundles each package whose exports point into dist/bundle/: tsc's per-module output becomes one
// file per entry (index, test-support, the CLI's bin), everything a package imports by name (other
// @tether packages, npm dependencies, node:) left to Node. Why: docs/decisions/2026-12-02-each-package-loads-as-one-file.md.
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const bundleFolder = './dist/bundle/';

/** The entries of one package's bundle: each exported dist/bundle/<name>.js, built from tsc's dist/<name>.js. */
function entriesOf(packageFolder) {
  const manifest = JSON.parse(readFileSync(path.join(packageFolder, 'package.json'), 'utf8'));
  const targets = Object.values(manifest.exports ?? {}).flatMap((target) =>
    typeof target === 'object' && typeof target.default === 'string' ? [target.default] : [],
  );
  const names = targets
    .filter((target) => target.startsWith(bundleFolder))
    .map((target) => target.slice(bundleFolder.length, -'.js'.length));
  // The CLI's executable (bin/tether.js) imports its bundled bin, which no export names.
  if (names.length > 0 && existsSync(path.join(packageFolder, 'src', 'bin.ts'))) names.push('bin');
  return Object.fromEntries(names.map((name) => [name, path.join(packageFolder, 'dist', `${name}.js`)]));
}

export async function bundlePackages(root) {
  const packagesFolder = path.join(root, 'packages');
  for (const name of readdirSync(packagesFolder).sort()) {
    const packageFolder = path.join(packagesFolder, name);
    if (!existsSync(path.join(packageFolder, 'package.json'))) continue;
    const entryPoints = entriesOf(packageFolder);
    if (Object.keys(entryPoints).length === 0) continue;
    const outdir = path.join(packageFolder, 'dist', 'bundle');
    // A chunk of an earlier build would stay beside the new ones, named by no entry.
    rmSync(outdir, { recursive: true, force: true });
    await build({
      entryPoints,
      outdir,
      bundle: true,
      // Entries of one package share its modules (one copy of each module's state), and what a package
      // imports lazily stays a chunk loaded on first use.
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node22',
      packages: 'external',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
  }
}
