// Runs the whole suite with vitest and ends with one line CI can read: "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const vitest = path.join(path.dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const resultsFile = path.join(root, '.test-results', 'results.json');
mkdirSync(path.dirname(resultsFile), { recursive: true });
rmSync(resultsFile, { force: true });

const started = Date.now();
const run = spawnSync(
  process.execPath,
  [
    vitest,
    'run',
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${resultsFile}`,
    ...process.argv.slice(2),
  ],
  {
    cwd: root,
    stdio: 'inherit',
  },
);

let passed = 0;
let failed = 0;
let skipped = 0;
let browserTestsSkipped = 0;
try {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8'));
  passed = results.numPassedTests ?? 0;
  // A file that fails to load has no tests of its own; count it as one failure.
  const brokenFiles = (results.testResults ?? []).filter(
    (file) => file.status === 'failed' && (file.assertionResults ?? []).length === 0,
  ).length;
  failed = (results.numFailedTests ?? 0) + brokenFiles;
  skipped = (results.numPendingTests ?? 0) + (results.numTodoTests ?? 0);
  if (results.success === false && failed === 0) failed = 1;
  browserTestsSkipped = (results.testResults ?? [])
    .filter((file) => file.name.includes(`${path.sep}tests${path.sep}web${path.sep}`))
    .flatMap((file) => file.assertionResults ?? [])
    .filter((test) => test.status === 'pending' || test.status === 'skipped').length;
} catch {
  failed = Math.max(failed, 1);
}
if (run.status !== 0 && failed === 0) {
  // Every test passed, yet vitest failed the run: an unhandled error (printed above) counts as a failure.
  console.log(`\n!!! vitest exited ${run.status ?? run.signal} with no failed test: see "Unhandled Errors" above.\n`);
  failed = 1;
}
const seconds = ((Date.now() - started) / 1000).toFixed(0);
if (browserTestsSkipped > 0) {
  console.log(
    `\n!!! ${browserTestsSkipped} BROWSER TESTS DID NOT RUN: no Chromium. Install it: sudo apt-get install -y chromium\n`,
  );
}
const exitCode = run.status === 0 && failed === 0 ? 0 : run.status || 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} (${seconds} s)`);
process.exit(exitCode);
