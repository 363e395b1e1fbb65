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

  it('resolves a relative directory against the given working directory', () => {
    expect(resolveDataDir({ dataDir: 'data', cwd: '/srv/project', environment: {} })).toBe('/srv/project/data');
    expect(resolveDataDir({ cwd: '/srv/project', environment: { TETHER_HOME: 'data' } })).toBe('/srv/project/data');
  });

  it('reads a leading ~ as the home directory (a quoted or service-file value the shell left alone)', () => {
    expect(resolveDataDir({ environment: { TETHER_HOME: '~/tether-data' }, cwd: '/srv' })).toBe(
      path.join(homedir(), 'tether-data'),
    );
    expect(resolveDataDir({ dataDir: '~', environment: {}, cwd: '/srv' })).toBe(homedir());
    expect(resolveDataDir({ dataDir: '~other/data', environment: {}, cwd: '/srv' })).toBe('/srv/~other/data');
  });
});
