import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * Where the web UI's built files are (`@tether/web`'s dist/), or null when it was not built. The
 * CLI composes: the daemon never imports the UI, it is only told which directory to serve.
 */
export function webUiDirectory(): string | null {
  try {
    const manifest = createRequire(import.meta.url).resolve('@tether/web/package.json');
    const directory = path.join(path.dirname(manifest), 'dist');
    return existsSync(path.join(directory, 'index.html')) ? directory : null;
  } catch {
    return null;
  }
}
