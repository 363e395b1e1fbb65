import { homedir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveDataDir } from './index.js';

describe('resolveDataDir', () => {
  it('prefers the explicit option over TETHER_HOME', () => {
    expect(resolveDataDir({ dataDir: '/srv/explicit', environment: { TETHER_HOME: '/srv/from-environment' } })).toBe(
      path.resolve('/srv/explicit'),
    );
  });

  it('uses TETHER_HOME when there is no option', () => {
    expect(resolveDataDir({ environment: { TETHER_HOME: '/srv/from-environment' } })).toBe(
      path.resolve('/srv/from-environment'),
    );
  });

  it('falls back to ~/.tether', () => {
    expect(resolveDataDir({ environment: {} })).toBe(path.join(homedir(), '.tether'));
    expect(resolveDataDir({ environment: { TETHER_HOME: '' } })).toBe(path.join(homedir(), '.tether'));
  });

  it('makes a relative directory absolute', () => {
    expect(resolveDataDir({ dataDir: 'relative/data', environment: {} })).toBe(path.resolve('relative/data'));
  });
});
