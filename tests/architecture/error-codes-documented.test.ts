import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorCodeTable } from '@tether/protocol';
import { expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// docs/protocol.md presents its error table as the stable codes hosts get: every code of the
// protocol's one table is there, with the same HTTP status and exit code, and nothing else is.
it("docs/protocol.md's error table lists every error code with its HTTP status and exit code", () => {
  const text = readFileSync(path.join(root, 'docs/protocol.md'), 'utf8');
  const errors = text.slice(text.indexOf('## Errors'));
  const rows = [...errors.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \| (\d) \|/gm)].map(
    ([, code, httpStatus, exitCode]) => [code, { httpStatus: Number(httpStatus), exitCode: Number(exitCode) }] as const,
  );
  const documented = Object.fromEntries(rows);
  const expected = Object.fromEntries(
    Object.entries(errorCodeTable).map(([code, { httpStatus, exitCode }]) => [code, { httpStatus, exitCode }]),
  );
  expect(rows.length).toBe(Object.keys(documented).length);
  expect(documented).toEqual(expected);
});
