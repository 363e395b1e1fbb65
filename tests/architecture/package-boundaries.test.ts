import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Which Tether packages each package's source may import: the layering, written once (DEVELOPERS.md's table). */
const allowed: Record<string, string[]> = {
  protocol: [],
  'provider-spec': ['protocol'],
  runtime: ['protocol', 'provider-spec'],
  'store-sqlite': ['protocol', 'runtime'],
  'store-postgres': ['protocol', 'runtime'],
  'workspace-git': ['protocol', 'runtime'],
  'fake-anthropic-api': [],
  'provider-claude': ['protocol', 'provider-spec'],
  testkit: ['protocol', 'provider-spec', 'runtime', 'fake-anthropic-api', 'provider-claude'],
  client: ['protocol'],
  web: ['protocol', 'client'],
  daemon: ['protocol', 'provider-spec', 'runtime', 'store-sqlite', 'workspace-git', 'provider-claude'],
  acp: ['protocol'],
  cli: [
    'protocol',
    'runtime',
    'store-sqlite',
    'store-postgres',
    'workspace-git',
    'provider-claude',
    'fake-anthropic-api',
    'client',
    'daemon',
    'acp',
  ],
};

/**
 * What a package's tests may import besides what its source may: the testkit always (a devDependency: it imports
 * the packages it tests), and the few packages written here, each with its reason.
 */
const testsMayAlsoImport: Record<string, string[]> = {
  // Its own tests run the real claude binary with the flags Tether launches it with, which provider-claude owns.
  'fake-anthropic-api': ['provider-claude'],
};

/** The one extra entry a package other than the testkit may declare: what tests need of its internals. */
const testSupportEntry = './test-support';

interface Manifest {
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly exports?: Record<string, unknown>;
}

interface TetherImport {
  readonly file: string;
  readonly name: string;
  /** The package.json exports key the specifier asks for: '.' or e.g. './test-support'. */
  readonly entry: string;
}

const packageNames = readdirSync(path.join(root, 'packages'));

function manifestOf(name: string): Manifest {
  return JSON.parse(readFileSync(path.join(root, 'packages', name, 'package.json'), 'utf8')) as Manifest;
}

function tetherNames(dependencies: Record<string, string> | undefined): string[] {
  return Object.keys(dependencies ?? {})
    .filter((dependency) => dependency.startsWith('@tether/'))
    .map((dependency) => dependency.slice('@tether/'.length));
}

/** Every script file under `directory` (fixtures and tests included), skipping installed and built output. */
function codeFiles(directory: string): string[] {
  if (!existsSync(directory)) return [];
  return readdirSync(directory).flatMap((entry) => {
    const full = path.join(directory, entry);
    if (statSync(full).isDirectory()) return entry === 'node_modules' || entry === 'dist' ? [] : codeFiles(full);
    return /\.(tsx?|mjs|js)$/.test(entry) ? [full] : [];
  });
}

/** Test code: test files, their helpers, fixtures and a package's own `src/test-support/` folder (none of it built). */
function isTestCode(file: string): boolean {
  const parts = path.relative(root, file).split(path.sep);
  return /\.test(-helper)?\.tsx?$/.test(file) || parts.includes('__fixtures__') || parts.includes('test-support');
}

/** A package's built source: what its dist/ is made of. */
function sourceFiles(name: string): string[] {
  return codeFiles(path.join(root, 'packages', name, 'src')).filter(
    (file) => /\.tsx?$/.test(file) && !isTestCode(file),
  );
}

function testFiles(name: string): string[] {
  return codeFiles(path.join(root, 'packages', name, 'src')).filter(isTestCode);
}

function specifiers(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*(['"])([^'"\n]+)\1/g)].map((match) => match[2]!);
}

function tetherImports(file: string): TetherImport[] {
  return specifiers(file).flatMap((specifier) => {
    const match = /^@tether\/([a-z-]+)(\/.*)?$/.exec(specifier);
    return match
      ? [{ file: path.relative(root, file), name: match[1]!, entry: match[2] === undefined ? '.' : `.${match[2]}` }]
      : [];
  });
}

/** The package folder (packages/<name>) a path lies in, or the top-level folder (tests, tools, ...) outside packages/. */
function roomOf(absolute: string): string {
  const [top, name] = path.relative(root, absolute).split(path.sep);
  return top === 'packages' ? `packages/${name}` : top!;
}

describe('package boundaries', () => {
  it('knows every package', () => {
    expect([...packageNames].sort()).toEqual(Object.keys(allowed).sort());
  });

  for (const name of Object.keys(allowed)) {
    it(`${name} imports only what it may, through its main entry, and declares it`, () => {
      const declared = tetherNames(manifestOf(name).dependencies);
      // The testkit is test support itself: it may build on other packages' test-support entries.
      const entries = name === 'testkit' ? ['.', testSupportEntry] : ['.'];
      for (const imported of sourceFiles(name).flatMap(tetherImports)) {
        expect(allowed[name], `${imported.file} imports @tether/${imported.name}`).toContain(imported.name);
        expect(declared, `${imported.file} imports @tether/${imported.name}, missing from dependencies`).toContain(
          imported.name,
        );
        expect(
          entries,
          `${imported.file} imports @tether/${imported.name}${imported.entry.slice(1)}: source uses main entries only`,
        ).toContain(imported.entry);
      }
    });

    it(`${name}'s tests import what it may, the testkit and declared entries, and declare them`, () => {
      const manifest = manifestOf(name);
      const declared = [...tetherNames(manifest.dependencies), ...tetherNames(manifest.devDependencies)];
      for (const imported of testFiles(name).flatMap(tetherImports)) {
        expect(
          [...allowed[name]!, 'testkit', ...(testsMayAlsoImport[name] ?? [])],
          `${imported.file} imports @tether/${imported.name}`,
        ).toContain(imported.name);
        expect(
          declared,
          `${imported.file} imports @tether/${imported.name}, missing from dependencies and devDependencies`,
        ).toContain(imported.name);
        expect(
          Object.keys(manifestOf(imported.name).exports ?? {}),
          `${imported.file} imports @tether/${imported.name}${imported.entry.slice(1)}, not an entry of its package.json exports`,
        ).toContain(imported.entry);
      }
    });
  }

  it('the suites under tests/ import packages only through their declared entries', () => {
    for (const imported of codeFiles(path.join(root, 'tests')).flatMap(tetherImports)) {
      expect(packageNames, `${imported.file} imports @tether/${imported.name}`).toContain(imported.name);
      expect(
        Object.keys(manifestOf(imported.name).exports ?? {}),
        `${imported.file} imports @tether/${imported.name}${imported.entry.slice(1)}, not an entry of its package.json exports`,
      ).toContain(imported.entry);
    }
  });

  it('no file reaches into another package by a relative path', () => {
    const folders = ['packages', 'tests', 'examples', 'bench', 'tools', 'scripts'];
    for (const file of folders.flatMap((folder) => codeFiles(path.join(root, folder)))) {
      for (const specifier of specifiers(file).filter((specifier) => specifier.startsWith('.'))) {
        const target = path.resolve(path.dirname(file), specifier);
        if (!path.relative(root, target).startsWith(`packages${path.sep}`)) continue;
        expect(
          roomOf(target),
          `${path.relative(root, file)} imports ${specifier}: use the package's name (or its test-support entry)`,
        ).toBe(roomOf(file));
      }
    }
  });

  it('every package exports its main entry and at most a test-support entry (the testkit: its suites too), each from source and from dist', () => {
    for (const name of packageNames) {
      const exports = manifestOf(name).exports ?? {};
      for (const [entry, target] of Object.entries(exports)) {
        if (entry === './package.json') continue;
        if (name !== 'testkit') expect(['.', testSupportEntry], `@tether/${name} exports ${entry}`).toContain(entry);
        expect(Object.keys(target as Record<string, string>), `@tether/${name} ${entry}`).toEqual([
          '@tether/source',
          'types',
          'default',
        ]);
      }
    }
  });

  it("the testkit is only ever a devDependency, and the packages' dependencies form no loop", () => {
    const dependencies = Object.fromEntries(
      packageNames.map((name) => [name, tetherNames(manifestOf(name).dependencies)]),
    );
    for (const name of packageNames)
      expect(dependencies[name], `@tether/${name}'s dependencies`).not.toContain('testkit');
    const visit = (name: string, trail: string[]): void => {
      expect(trail, `a dependency loop: ${[...trail, name].join(' -> ')}`).not.toContain(name);
      for (const next of dependencies[name] ?? []) visit(next, [...trail, name]);
    };
    for (const name of packageNames) visit(name, []);
  });

  it('the CLI starts the daemon only in serve and the fake API only in demo (docs/decisions/2026-12-01-cli-embeds-the-daemon-and-the-fake-api.md)', () => {
    const embedding = {
      daemon: path.join('commands', 'serve-command.ts'),
      fakeApi: path.join('commands', 'demo-command.ts'),
    };
    for (const file of sourceFiles('cli')) {
      const relative = path.relative(path.join(root, 'packages', 'cli', 'src'), file);
      const startsDaemon = /\bstartDaemon\b/.test(readFileSync(file, 'utf8'));
      const importsFakeApi = tetherImports(file).some((imported) => imported.name === 'fake-anthropic-api');
      expect(startsDaemon, `${relative} starts the daemon`).toBe(relative === embedding.daemon);
      expect(importsFakeApi, `${relative} imports the fake API`).toBe(relative === embedding.fakeApi);
    }
  });

  it('the web UI imports nothing but react, its Markdown libraries, @tether/protocol and @tether/client; the daemon never imports it', () => {
    for (const file of sourceFiles('web')) {
      const text = readFileSync(file, 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s+'([^'.][^']*)'/g)) {
        expect(
          [
            'react',
            'react-dom/client',
            'react-markdown',
            'remark-gfm',
            'rehype-highlight',
            '@tether/protocol',
            '@tether/client',
          ],
          `${path.relative(root, file)} imports ${specifier}`,
        ).toContain(specifier);
      }
    }
    for (const file of sourceFiles('daemon')) {
      expect(readFileSync(file, 'utf8'), path.relative(root, file)).not.toContain('@tether/web');
    }
  });

  it('provider-claude never imports the Agent SDK statically: the sdk transport loads it when a session needs it', () => {
    for (const file of sourceFiles('provider-claude')) {
      const text = readFileSync(file, 'utf8');
      expect(text, path.relative(root, file)).not.toMatch(/(from|import\()\s*'@anthropic-ai\/claude-agent-sdk/);
    }
  });

  it('the runtime never imports a concrete provider, a child process, a SQLite driver or HTTP', () => {
    for (const file of sourceFiles('runtime')) {
      const text = readFileSync(file, 'utf8');
      expect(text, path.relative(root, file)).not.toMatch(
        /from '(node:child_process|node:sqlite|node:http|@tether\/provider-claude)'/,
      );
    }
  });
});
