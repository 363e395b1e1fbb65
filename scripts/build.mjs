// Builds every package (tsc project references) and makes the `tether` bin executable:
// npm links bins before the build creates them, so it cannot set the mode itself.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const result = spawnSync(process.execPath, [tsc, '-b', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
const bin = path.join(root, 'packages/cli/dist/bin.js');
if (existsSync(bin)) chmodSync(bin, 0o755);
