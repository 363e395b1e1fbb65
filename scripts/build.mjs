// Builds every package (tsc project references) and bundles each into one file per entry, then
// type-checks and bundles the web UI (Vite), whose dist/ `tether serve` hands to the daemon.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundlePackages } from './bundle-packages.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const vite = path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');

function run(args) {
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

run([tsc, '-b', ...process.argv.slice(2)]);
await bundlePackages(root);
// The UI is browser code (DOM types, JSX): its own tsconfig, no emit; Vite does the bundling.
run([tsc, '-p', 'packages/web/tsconfig.json']);
run([vite, 'build', 'packages/web', '--logLevel', 'warn']);
