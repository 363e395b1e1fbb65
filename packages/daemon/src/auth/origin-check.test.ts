import { describe, expect, it } from 'vitest';
import { createOriginPolicy, isAllowedHost, judgeOrigin, passesOriginPolicy } from './origin-check.js';

const policy = createOriginPolicy({
  port: 7437,
  boundHost: '127.0.0.1',
  allowOrigins: ['http://localhost:5173/', 'https://app.example'],
});

describe('the Host check', () => {
  it('accepts loopback names with the daemon port only', () => {
    for (const host of ['127.0.0.1:7437', 'localhost:7437', 'LOCALHOST:7437', '[::1]:7437'])
      expect(isAllowedHost(host, policy), host).toBe(true);
    for (const host of [
      undefined,
      '',
      '127.0.0.1',
      'localhost:7438',
      'evil.example:7437',
      'localhost.evil.example:7437',
      '127.0.0.1.nip.io:7437',
      '[::2]:7437',
      'localhost:7437:1',
    ]) {
      expect(isAllowedHost(host, policy), String(host)).toBe(false);
    }
  });

  it('adds the bound host when it is not a loopback one', () => {
    const lan = createOriginPolicy({ port: 7437, boundHost: '192.168.1.20' });
    expect(isAllowedHost('192.168.1.20:7437', lan)).toBe(true);
    const wildcard = createOriginPolicy({
      port: 7437,
      boundHost: '0.0.0.0',
      interfaceAddresses: ['10.0.0.5', 'fe80::1'],
    });
    expect(isAllowedHost('10.0.0.5:7437', wildcard)).toBe(true);
    expect(isAllowedHost('[fe80::1]:7437', wildcard)).toBe(true);
    expect(isAllowedHost('10.0.0.6:7437', wildcard)).toBe(false);
  });
});

describe('the Origin check', () => {
  it('tells absent, own, allowed and refused origins apart', () => {
    expect(judgeOrigin(undefined, policy)).toBe('absent');
    expect(judgeOrigin('http://127.0.0.1:7437', policy)).toBe('own');
    expect(judgeOrigin('http://localhost:7437', policy)).toBe('own');
    expect(judgeOrigin('http://[::1]:7437', policy)).toBe('own');
    expect(judgeOrigin('http://localhost:5173', policy)).toBe('allowed');
    expect(judgeOrigin('https://app.example', policy)).toBe('allowed');
    for (const origin of [
      'null',
      'http://evil.example',
      'https://localhost:7437',
      'http://localhost:7438',
      'http://localhost',
      'file://',
      'not a url',
    ]) {
      expect(judgeOrigin(origin, policy), origin).toBe('refused');
    }
  });

  it('passes a request only when both hold', () => {
    expect(passesOriginPolicy({ host: 'localhost:7437', origin: undefined }, policy)).toBe(true);
    expect(passesOriginPolicy({ host: 'localhost:7437', origin: 'http://evil.example' }, policy)).toBe(false);
    expect(passesOriginPolicy({ host: 'evil.example:7437', origin: 'http://localhost:7437' }, policy)).toBe(false);
  });

  it('refuses an allowOrigins entry that is not an origin', () => {
    expect(() => createOriginPolicy({ port: 1, boundHost: '127.0.0.1', allowOrigins: ['localhost:5173'] })).toThrow(
      /not an http\(s\) origin/,
    );
  });
});

describe('the advertised address', () => {
  it('is taken as the daemon itself: its Host (with or without the default port) and its origin, nothing near it', () => {
    const proxied = createOriginPolicy({ port: 7437, boundHost: '127.0.0.1', advertiseUrl: 'https://Tether.example/' });
    for (const host of ['tether.example', 'tether.example:443', '127.0.0.1:7437'])
      expect(isAllowedHost(host, proxied), host).toBe(true);
    for (const host of ['tether.example:7437', 'tether.example:80', 'evil.tether.example'])
      expect(isAllowedHost(host, proxied), host).toBe(false);
    expect(judgeOrigin('https://tether.example', proxied)).toBe('own');
    expect(judgeOrigin('http://tether.example', proxied)).toBe('refused');
  });

  it('must be an http(s) URL without credentials, which the refusal does not repeat', () => {
    for (const advertiseUrl of ['tether.example', 'ftp://tether.example', 'https://ops:hunter2@tether.example']) {
      let refusal: unknown;
      try {
        createOriginPolicy({ port: 1, boundHost: '127.0.0.1', advertiseUrl });
      } catch (error) {
        refusal = error;
      }
      expect(refusal, advertiseUrl).toMatchObject({
        code: 'invalid_command',
        details: { reason: 'invalid_advertiseUrl' },
      });
      expect(String((refusal as Error).message)).not.toContain('hunter2');
    }
    const withQuery = createOriginPolicy({
      port: 1,
      boundHost: '127.0.0.1',
      advertiseUrl: 'https://a.example/?to=x@y',
    });
    expect(withQuery.advertised?.origin).toBe('https://a.example');
  });
});
