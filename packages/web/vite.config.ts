import { fileURLToPath } from 'node:url';
import { defaultClientConditions, defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
// `vite dev` forwards the API to a running daemon (start it with --allow-origin http://localhost:5173).
const daemonUrl = process.env.TETHER_DAEMON_URL ?? 'http://127.0.0.1:7437';

export default defineConfig({
  root,
  base: '/',
  // React's automatic JSX runtime through Vite's own esbuild: no extra plugin needed for a build.
  esbuild: { jsx: 'automatic' },
  resolve: {
    // The workspace packages are bundled from their sources, as the tests use them.
    conditions: ['@tether/source', ...defaultClientConditions],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The CSP allows no inline script: keep every byte of code in files.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    target: 'es2022',
    // The main chunk is ~550 KB (React, zod, react-markdown; the highlighter is a chunk of its own):
    // served from the daemon on the same machine, one file is fine; warn if it grows well past that.
    chunkSizeWarningLimit: 650,
    rollupOptions: {
      onwarn(warning, warn) {
        // zod's sources carry comments Rollup cannot place; harmless, and not ours to fix.
        if (warning.code === 'INVALID_ANNOTATION' && warning.id?.includes('/node_modules/zod/')) return;
        warn(warning);
      },
    },
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/v1': daemonUrl, '/health': daemonUrl },
  },
});
