#!/usr/bin/env node
// The `tether` executable. It is committed (not built) so npm can link it at install time,
// before the build has produced dist/.
import { existsSync } from 'node:fs';
import { nodeVersionProblem } from './node-version-check.js';

const problem = nodeVersionProblem(process.versions.node, existsSync(new URL('../../../dev', import.meta.url)));
if (problem !== null) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
try {
  await import('../dist/bundle/bin.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/bundle/bin.js')) {
    process.stderr.write(
      'tether: the packages are not built yet. Run "./dev npm run build" (or "./dev npm ci") first.\n',
    );
    process.exit(1);
  }
  throw error;
}
