import { describe, expect, it } from 'vitest';
import { UsageError } from '../usage-error.js';
import { parseStoreLocation, withoutStoreUrl } from './store-option.js';

const secret = 'pa:ss/w%40rd-SECRET';
const url = `postgres://tether:${encodeURIComponent(secret)}@db.example:5433/sessions?sslmode=require&password=other-SECRET`;

function usageMessage(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a usage error');
}

describe('--store and TETHER_STORE_URL', () => {
  it('are the data dir when neither is given (an empty variable counts as unset)', () => {
    expect(parseStoreLocation(undefined, {})).toEqual({ kind: 'data-dir' });
    expect(parseStoreLocation(undefined, { TETHER_STORE_URL: '' })).toEqual({ kind: 'data-dir' });
  });

  it('open PostgreSQL for postgres:// and postgresql:// URLs, described without the password or query', () => {
    const location = parseStoreLocation(url, {});
    expect(location).toMatchObject({
      kind: 'postgres',
      url,
      description: 'postgres://tether@db.example:5433/sessions',
    });
    const other = parseStoreLocation(undefined, { TETHER_STORE_URL: 'postgresql://db.example/x' });
    expect(other).toMatchObject({ kind: 'postgres', description: 'postgresql://db.example/x' });
    // Both forms of the password (as written and decoded) and a password given in the query are kept out of output.
    expect(location.kind === 'postgres' && location.secrets).toEqual(
      expect.arrayContaining([encodeURIComponent(secret), secret, 'other-SECRET']),
    );
  });

  it('keep every spelling of a password out of output: as typed, re-encoded and decoded, in the user part and the query', () => {
    const value = 'postgres://tether:p%2Bss w@db.example/x?sslmode=disable&password=a%2Bb&password=c+d#frag';
    const location = parseStoreLocation(value, {});
    expect(location.kind === 'postgres' && location.secrets).toEqual(
      expect.arrayContaining(['p%2Bss w', 'p%2Bss%20w', 'p+ss w', 'a%2Bb', 'a+b', 'c+d', 'c d']),
    );
    // However a message quotes the value, nothing of a password is left once each secret is taken out.
    const scrubbed =
      location.kind === 'postgres'
        ? location.secrets.reduce((text, secret) => text.split(secret).join('***'), `${value} ${new URL(value).href}`)
        : '';
    for (const part of ['p%2Bss', 'a%2Bb', 'c+d', 'p+ss', 'a+b']) expect(scrubbed).not.toContain(part);
  });

  it('say that a password holding / # or ? must be percent-encoded, without repeating it', () => {
    for (const password of ['Xpa/ss-SECRET', 'Xpa#ss-SECRET', 'Xpa?ss-SECRET']) {
      const message = usageMessage(() => parseStoreLocation(`postgres://tether:${password}@db:5432/tether`, {}));
      expect(message).toContain('must be percent-encoded');
      expect(message).not.toContain('SECRET');
    }
  });

  it('start a PostgreSQL server of their own for embedded-postgres, from the flag or the variable', () => {
    expect(parseStoreLocation('embedded-postgres', {})).toEqual({ kind: 'embedded-postgres' });
    expect(parseStoreLocation(undefined, { TETHER_STORE_URL: 'embedded-postgres' })).toEqual({
      kind: 'embedded-postgres',
    });
  });

  it('take the flag over the variable', () => {
    const location = parseStoreLocation('postgres://flag.example/db', { TETHER_STORE_URL: 'mysql://u:p@h/db' });
    expect(location).toMatchObject({ kind: 'postgres', description: 'postgres://flag.example/db' });
  });

  it('refuse anything else with a usage error naming the accepted forms and never the value', () => {
    for (const [flag, environment, source] of [
      ['mysql://tether:SECRET@db.example/x', {}, '--store'],
      ['not a url SECRET', {}, '--store'],
      ['postgres://tether:SECRET@/x', {}, '--store'],
      [undefined, { TETHER_STORE_URL: 'sqlite:///home/SECRET/tether.db' }, 'TETHER_STORE_URL'],
    ] as const) {
      const message = usageMessage(() => parseStoreLocation(flag, environment));
      expect(message).toContain(source);
      expect(message).toContain('postgres://USER:PASSWORD@HOST:PORT/DATABASE or postgresql://');
      expect(message).not.toContain('SECRET');
    }
  });

  it('are kept from the environment the agent gets', () => {
    expect(withoutStoreUrl({ PATH: '/bin', TETHER_STORE_URL: url })).toEqual({ PATH: '/bin' });
    const untouched = { PATH: '/bin' };
    expect(withoutStoreUrl(untouched)).toBe(untouched);
  });
});
