import { readFile, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'hono';
import { contentTypeOf, resolveStaticPath, wantsHtml } from './static-path.js';

/** One file as it goes out. */
export interface StaticFile {
  readonly body: Uint8Array<ArrayBuffer>;
  readonly contentType: string;
  readonly cacheControl: string;
}

// Vite names every built asset by its content hash: a name never changes meaning, so it may be kept.
const immutable = 'public, max-age=31536000, immutable';
// index.html names the current assets: always ask again.
const revalidate = 'no-cache';

/**
 * The web UI's built files (public: they hold no data, only code; every /v1 route still needs the
 * token). A miss is null, except that a browser navigation to an unknown path gets index.html, so
 * a reload of /sessions/… lands in the app.
 */
export class StaticFiles {
  private readonly root: string;
  private readonly indexFile: string;

  private constructor(root: string, indexFile: string) {
    this.root = root;
    this.indexFile = indexFile;
  }

  /** null when `directory` holds no index.html (e.g. the web package was not built). */
  static async open(directory: string): Promise<StaticFiles | null> {
    try {
      const root = await realpath(path.resolve(directory));
      const indexFile = path.join(root, 'index.html');
      return (await stat(indexFile)).isFile() ? new StaticFiles(root, indexFile) : null;
    } catch {
      return null;
    }
  }

  async lookup(urlPath: string, acceptHeader: string | undefined): Promise<StaticFile | null> {
    const filePath = resolveStaticPath(this.root, urlPath);
    const found = filePath === null ? null : await this.readInside(filePath === this.root ? this.indexFile : filePath);
    if (found) return found;
    // Only a navigation falls back: a missing script or image must stay a 404, not become HTML.
    if (!wantsHtml(acceptHeader) || path.extname(urlPath) !== '') return null;
    return this.readInside(this.indexFile);
  }

  private async readInside(filePath: string): Promise<StaticFile | null> {
    try {
      // A symbolic link inside the root could point anywhere: judge where it really leads.
      const real = await realpath(filePath);
      if (!real.startsWith(this.root + path.sep) || !(await stat(real)).isFile()) return null;
      const relative = path.relative(this.root, real);
      return {
        body: new Uint8Array(await readFile(real)),
        contentType: contentTypeOf(real),
        cacheControl: relative.startsWith(`assets${path.sep}`) ? immutable : revalidate,
      };
    } catch {
      return null;
    }
  }
}

/** The answer for one static file (HEAD: the same headers, no body). */
export function staticResponse(context: Context, file: StaticFile): Response {
  const headers = {
    'Content-Type': file.contentType,
    'Cache-Control': file.cacheControl,
    'Content-Length': String(file.body.byteLength),
  };
  return context.req.method === 'HEAD' ? context.body(null, 200, headers) : context.body(file.body, 200, headers);
}
