import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentTypeOf, resolveStaticPath, wantsHtml } from './static-path.js';

const root = '/srv/web';

describe('resolveStaticPath', () => {
  it('maps a URL path to a file inside the root', () => {
    expect(resolveStaticPath(root, '/')).toBe(root);
    expect(resolveStaticPath(root, '/index.html')).toBe(path.join(root, 'index.html'));
    expect(resolveStaticPath(root, '/assets/app-1a2b.js')).toBe(path.join(root, 'assets', 'app-1a2b.js'));
    expect(resolveStaticPath(root, '//assets//x.css')).toBe(path.join(root, 'assets', 'x.css'));
  });

  it('refuses every spelling of a climb out of the root', () => {
    for (const attempt of [
      '/../etc/passwd',
      '/assets/../../etc/passwd',
      '/%2e%2e/etc/passwd',
      '/%2E%2E%2Fetc%2Fpasswd',
      '/..%2fetc',
      '/assets/..%5c..%5cetc',
      '/a\\..\\b',
      '/.%2e/x',
      '/%00',
      '/x%00.html',
      '/%',
    ]) {
      expect(resolveStaticPath(root, attempt), attempt).toBeNull();
    }
  });

  it('never serves hidden files', () => {
    expect(resolveStaticPath(root, '/.env')).toBeNull();
    expect(resolveStaticPath(root, '/assets/.git/config')).toBeNull();
  });

  it('needs an absolute URL path', () => {
    expect(resolveStaticPath(root, 'index.html')).toBeNull();
  });
});

describe('contentTypeOf and wantsHtml', () => {
  it('names the types the UI uses and sends the rest as bytes', () => {
    expect(contentTypeOf('/a/index.html')).toBe('text/html; charset=utf-8');
    expect(contentTypeOf('/a/app.JS')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('/a/app.css')).toBe('text/css; charset=utf-8');
    expect(contentTypeOf('/a/data.bin')).toBe('application/octet-stream');
  });

  it('knows a browser navigation from a fetch', () => {
    expect(wantsHtml('text/html,application/xhtml+xml,*/*;q=0.8')).toBe(true);
    expect(wantsHtml('application/json')).toBe(false);
    expect(wantsHtml('*/*')).toBe(false);
    expect(wantsHtml(undefined)).toBe(false);
  });
});
