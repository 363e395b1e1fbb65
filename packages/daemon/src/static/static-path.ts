import path from 'node:path';

/**
 * The file a URL path names inside `root`, or null when it names nothing that may be served.
 * Decoding happens once, per segment, before any check: "%2e%2e", "%2f", backslashes, NUL and
 * dot segments are refused outright rather than normalised, so no spelling of ".." can climb out
 * of the root. Hidden files (a segment starting with ".") are never served either.
 */
export function resolveStaticPath(root: string, urlPath: string): string | null {
  if (!urlPath.startsWith('/')) return null;
  const segments: string[] = [];
  for (const raw of urlPath.slice(1).split('/')) {
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      return null;
    }
    if (segment === '') continue;
    if (segment.startsWith('.') || /[\\/\0]/.test(segment)) return null;
    segments.push(segment);
  }
  const resolved = path.resolve(root, ...segments);
  // Defence in depth: whatever the checks above missed, the result must stay inside the root.
  return resolved === root || resolved.startsWith(root + path.sep) ? resolved : null;
}

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
};

/** The Content-Type of a served file; unknown kinds are sent as bytes (with nosniff, never run). */
export function contentTypeOf(filePath: string): string {
  return contentTypes[path.extname(filePath).toLowerCase()] ?? 'application/octet-stream';
}

/** Whether a request is a browser navigation that the single-page app answers (its index.html). */
export function wantsHtml(acceptHeader: string | undefined): boolean {
  return (acceptHeader ?? '').split(',').some((type) => type.trim().toLowerCase().startsWith('text/html'));
}
