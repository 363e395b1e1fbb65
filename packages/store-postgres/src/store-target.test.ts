import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectionUrl } from './store-target.js';

/** The warnings this process emits while `work` runs (emitWarning tells its listeners on the next tick). */
async function warningsDuring(work: () => void): Promise<string[]> {
  const warnings: string[] = [];
  const listener = (warning: Error) => warnings.push(warning.message);
  process.on('warning', listener);
  try {
    work();
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', listener);
  }
  return warnings;
}

describe('the URL pg connects with', () => {
  it('spells the sslmode aliases pg 8 takes as verify-full that way, and leaves every other URL as it is', () => {
    const base = 'postgres://tether:secret@db.example:5432/tether';
    for (const mode of ['prefer', 'require', 'verify-ca'])
      expect(connectionUrl(`${base}?sslmode=${mode}&application_name=x`)).toBe(
        `${base}?sslmode=verify-full&application_name=x`,
      );
    for (const url of [
      base,
      `${base}?sslmode=disable`,
      `${base}?sslmode=verify-full`,
      `${base}?uselibpqcompat=true&sslmode=require`,
      'not a url',
    ])
      expect(connectionUrl(url)).toBe(url);
  });

  it("keeps pg's SECURITY WARNING about those aliases off stderr (the URL as given prints it)", async () => {
    const url = 'postgres://tether@127.0.0.1:1/tether?sslmode=require';
    // pg warns once per process: the URL Tether connects with first, then the one given, which must warn.
    expect(await warningsDuring(() => new pg.Client({ connectionString: connectionUrl(url) }))).toEqual([]);
    expect(await warningsDuring(() => new pg.Client({ connectionString: url }))).toEqual([
      expect.stringContaining('SECURITY WARNING'),
    ]);
  });
});
