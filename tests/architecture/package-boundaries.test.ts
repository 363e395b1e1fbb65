import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Which Tether packages each package's source may import: the layering, written once. */
const allowed: Record<string, string[]> = {
  protocol: [],
  'provider-spec': ['protocol'],
  runtime: ['protocol', 'provider-spec'],
  'store-sqlite': ['protocol', 'runtime'],
  'fake-anthropic-api': [],
  'provider-claude': ['protocol', 'provider-spec'],
  testkit: ['protocol', 'provider-spec', 'runtime', 'fake-anthropic-api', 'provider-claude'],
  client: ['protocol'],
  web: ['protocol', 'client'],
  daemon: ['protocol', 'provider-spec', 'runtime', 'store-sqlite', 'provider-claude'],
  cli: ['protocol', 'runtime', 'store-sqlite', 'provider-claude', 'fake-anthropic-api', 'client', 'daemon'],
};

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const full = path.join(directory, entry);
    if (statSync(full).isDirectory()) return entry === '__fixtures__' ? [] : sourceFiles(full);
    return /\.tsx?$/.test(full) && !full.endsWith('.test.ts') && !full.endsWith('.test-helper.ts') ? [full] : [];
  });
}

function importedPackages(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/from\s+'@tether\/([a-z-]+)'|import\(\s*'@tether\/([a-z-]+)'/g)].map((match) => (match[1] ?? match[2])!);
}

describe('package boundaries', () => {
  const packages = readdirSync(path.join(root, 'packages'));

  it('knows every package', () => {
    expect(packages.sort()).toEqual(Object.keys(allowed).sort());
  });

  for (const name of Object.keys(allowed)) {
    it(`${name} imports only what it may, and declares it`, () => {
      const manifest = JSON.parse(readFileSync(path.join(root, 'packages', name, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
      const declared = Object.keys(manifest.dependencies ?? {}).filter((dependency) => dependency.startsWith('@tether/')).map((dependency) => dependency.slice('@tether/'.length));
      for (const file of sourceFiles(path.join(root, 'packages', name, 'src'))) {
        for (const imported of importedPackages(file)) {
          expect(allowed[name], `${path.relative(root, file)} imports @tether/${imported}`).toContain(imported);
          expect(declared, `${path.relative(root, file)} imports @tether/${imported}, missing from dependencies`).toContain(imported);
        }
      }
    });
  }

  it('the web UI imports nothing but react, its Markdown libraries, @tether/protocol and @tether/client; the daemon never imports it', () => {
    for (const file of sourceFiles(path.join(root, 'packages', 'web', 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s+'([^'.][^']*)'/g)) {
        expect(['react', 'react-dom/client', 'react-markdown', 'remark-gfm', 'rehype-highlight', '@tether/protocol', '@tether/client'], `${path.relative(root, file)} imports ${specifier}`).toContain(specifier);
      }
    }
    for (const file of sourceFiles(path.join(root, 'packages', 'daemon', 'src'))) {
      expect(readFileSync(file, 'utf8'), path.relative(root, file)).not.toContain('@tether/web');
    }
  });

  it('provider-claude never imports the Agent SDK statically: the sdk transport loads it when a session needs it', () => {
    for (const file of sourceFiles(path.join(root, 'packages', 'provider-claude', 'src'))) {
      const text = readFileSync(file, 'utf8');
      expect(text, path.relative(root, file)).not.toMatch(/(from|import\()\s*'@anthropic-ai\/claude-agent-sdk/);
    }
  });

  it('the runtime never imports a concrete provider, a child process, a SQLite driver or HTTP', () => {
    for (const file of sourceFiles(path.join(root, 'packages', 'runtime', 'src'))) {
      const text = readFileSync(file, 'utf8');
      expect(text, path.relative(root, file)).not.toMatch(/from '(node:child_process|node:sqlite|node:http|@tether\/provider-claude)'/);
    }
  });
});
