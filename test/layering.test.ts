// A layer that imports upward, a pure layer that imports I/O, or a cycle between modules is how a layout stops being true.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

/** The module folders of DESIGN.md's layout: each stands on domain/ and store/ only. */
const MODULES = [
  'trust',
  'gate',
  'ledger',
  'probes',
  'arrival',
  'recall',
  'history',
  'access',
  'reflection',
  'transfer',
  'crypto',
  'pglite',
  'postgres',
] as const;

type Layer =
  | 'domain'
  | 'store'
  | (typeof MODULES)[number]
  | 'engine'
  | 'root'
  | 'eval'
  | 'cli'
  | 'server'
  | 'adapters'
  | 'bench';

interface LayerRule {
  /** Folders (ending in `/`) and files that make up the layer. */
  paths: readonly string[];
  /** Layers its files may import, besides its own. */
  imports: readonly Layer[];
  /** Layers it may import types from (`import type`, erased at build) and nothing else. */
  types?: readonly Layer[];
  /** Imports no `node:*` module (DESIGN.md: domain/, gate/, ledger/, arrival/ do no I/O). */
  pure?: boolean;
  /** May import the database drivers (`pg`, `@electric-sql/*`): the engines, and bench/. */
  drivers?: boolean;
}

const BELOW_ENGINE: readonly Layer[] = [
  'domain',
  'store',
  ...MODULES.filter((m) => m !== 'pglite' && m !== 'postgres'),
];

/**
 * The layout, innermost first: domain ← store ← modules ← engine ← root ← cli, server. Lateral
 * imports between modules are type-only and listed here; these are the ones that exist:
 * - gate → crypto: the `OwnerSigner` a decision is signed with (the engine passes the crypto in);
 * - probes → ledger: the probe service implements the ledger's `FalsifierProbes` port;
 * - access → crypto: the `OwnerSigner` a token grant is signed with;
 * - reflection → gate, history: the `ProposalGate` its proposals go through and the result it
 *   answers with, and the history options it reads turns by (the engine passes both in);
 * - gate, arrival, recall, reflection → trust: the `Trust` every read and decision goes through
 *   (the engine makes one and passes it in).
 */
const RULES: Readonly<Record<Layer, LayerRule>> = {
  domain: { paths: ['src/domain/'], imports: [], pure: true },
  store: { paths: ['src/store/'], imports: ['domain'] },
  trust: { paths: ['src/trust/'], imports: ['domain', 'store'] },
  gate: {
    paths: ['src/gate/'],
    imports: ['domain', 'store'],
    types: ['crypto', 'trust'],
    pure: true,
  },
  ledger: { paths: ['src/ledger/'], imports: ['domain', 'store'], pure: true },
  probes: { paths: ['src/probes/'], imports: ['domain', 'store'], types: ['ledger'] },
  arrival: { paths: ['src/arrival/'], imports: ['domain', 'store'], types: ['trust'], pure: true },
  recall: { paths: ['src/recall/'], imports: ['domain', 'store'], types: ['trust'] },
  history: { paths: ['src/history/'], imports: ['domain', 'store'] },
  access: { paths: ['src/access/'], imports: ['domain', 'store'], types: ['crypto'] },
  reflection: {
    paths: ['src/reflection/'],
    imports: ['domain', 'store'],
    types: ['gate', 'history', 'trust'],
  },
  transfer: { paths: ['src/transfer/'], imports: ['domain', 'store'] },
  crypto: { paths: ['src/crypto/'], imports: ['domain'] },
  pglite: { paths: ['src/pglite/'], imports: ['domain', 'store'], drivers: true },
  postgres: { paths: ['src/postgres/'], imports: ['domain', 'store'], drivers: true },
  engine: { paths: ['src/engine.ts', 'src/engine/'], imports: BELOW_ENGINE },
  root: {
    paths: ['src/index.ts', 'src/rules.ts', 'src/faces.ts'],
    imports: [...BELOW_ENGINE, 'engine'],
  },
  // the LoCoMo harness, shipped: `memledger bench locomo` and the benches run the same copy; it
  // makes (and drops) a throwaway PostgreSQL schema per run, hence the driver
  eval: { paths: ['eval/'], imports: ['root'], drivers: true },
  // `memledger serve` and `memledger mcp` start the servers; the servers never call the CLI.
  // Besides the root, the faces import domain/'s pure modules (an error class, a vocabulary, a
  // renderer): a command that never opens the engine, or not yet, does not load it.
  cli: { paths: ['cli/'], imports: ['domain', 'root', 'server', 'eval', 'adapters'] },
  server: { paths: ['server/'], imports: ['domain', 'root'] },
  // the framework adapters (`memledger/ai-sdk`, …) and the hooks reach memory as the agent, by a
  // subject handle or a server's HTTP API (whose error class they answer with); the servers and
  // the CLI's commands are not theirs to call
  adapters: { paths: ['adapters/'], imports: ['domain', 'root', 'server'] },
  // benchmarks load stores in bulk and make (and drop) their own PostgreSQL schemas
  bench: {
    paths: ['bench/'],
    imports: [...BELOW_ENGINE, 'pglite', 'postgres', 'engine', 'root', 'eval'],
    drivers: true,
  },
};

/** Single files allowed one import their layer's rule does not give, each with its reason. */
const EXCEPTIONS: ReadonlyArray<{ file: string; imports: readonly Layer[]; why: string }> = [
  {
    file: 'src/store/open-store.ts',
    imports: ['pglite', 'postgres'],
    why: 'the opener loads the engine the db string names, lazily: a PostgreSQL host never loads PGlite',
  },
  {
    file: 'src/pglite/host-main.ts',
    imports: ['trust', 'crypto'],
    why: "the host program keeps its clients' trust views (src/trust/host-views.ts) with the engine's crypto",
  },
];

const DRIVER = /^(pg|pg\/.*|@electric-sql\/.*)$/;

function layerOf(file: string): Layer | null {
  for (const [layer, rule] of Object.entries(RULES) as Array<[Layer, LayerRule]>) {
    if (rule.paths.some((p) => (p.endsWith('/') ? file.startsWith(p) : file === p))) return layer;
  }
  return null;
}

interface ImportSpec {
  spec: string;
  /** `import type` / `export type`: erased at build, loads nothing. */
  typeOnly: boolean;
}

function importsOf(text: string): ImportSpec[] {
  const out: ImportSpec[] = [];
  for (const m of text.matchAll(/\b(import|export)(\s+type)?\s[^'";]*?\bfrom\s+'([^']+)'/g)) {
    out.push({ spec: m[3] as string, typeOnly: m[2] !== undefined });
  }
  for (const m of text.matchAll(/\bimport\s+'([^']+)'/g)) {
    out.push({ spec: m[1] as string, typeOnly: false });
  }
  for (const m of text.matchAll(/\bimport\('([^']+)'\)/g)) {
    out.push({ spec: m[1] as string, typeOnly: false });
  }
  return out;
}

function resolveLocal(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return posix.normalize(posix.join(posix.dirname(file), spec.replace(/\.js$/, '.ts')));
}

/** Every offence against the rule table in a tree of files (path → source text). */
function checkLayering(tree: ReadonlyMap<string, string>): string[] {
  const offences: string[] = [];
  for (const [file, text] of tree) {
    const layer = layerOf(file);
    if (layer === null) {
      offences.push(`${file} is in no layer of the layout`);
      continue;
    }
    const rule = RULES[layer];
    const extra = EXCEPTIONS.find((e) => e.file === file)?.imports ?? [];
    for (const { spec, typeOnly } of importsOf(text)) {
      if (spec.startsWith('node:') && rule.pure === true) {
        offences.push(`${file} imports ${spec} (${layer} does no I/O)`);
      }
      if (DRIVER.test(spec) && rule.drivers !== true) {
        offences.push(`${file} imports ${spec} (${layer} uses no database driver)`);
      }
      const target = resolveLocal(file, spec);
      if (target === null) continue;
      const to = layerOf(target);
      const allowed =
        to !== null &&
        (to === layer ||
          rule.imports.includes(to) ||
          extra.includes(to) ||
          (typeOnly && (rule.types ?? []).includes(to)));
      if (!allowed) {
        const may = [...rule.imports, ...(rule.types ?? []).map((t) => `${t} (types)`)];
        offences.push(
          `${file} imports ${target} (${layer} may import ${may.join(', ') || 'only itself'})`,
        );
      }
    }
  }
  return offences;
}

/** Every import cycle between the tree's files, each as `a -> b -> a`. */
function findCycles(tree: ReadonlyMap<string, string>): string[] {
  const graph = new Map(
    [...tree].map(([f, text]) => [
      f,
      importsOf(text)
        .map(({ spec }) => resolveLocal(f, spec))
        .filter((t): t is string => t !== null && tree.has(t)),
    ]),
  );
  const cycles: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (node: string, path: string[]): void => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'visiting') {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' -> '));
      return;
    }
    state.set(node, 'visiting');
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const f of tree.keys()) visit(f, []);
  return cycles;
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(join(ROOT, dir))) return [];
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const tree = new Map(
  ['src', 'eval', 'cli', 'server', 'bench', 'adapters']
    .flatMap(sourceFiles)
    .map((f) => [f, readFileSync(join(ROOT, f), 'utf8')] as const),
);

describe('layering', () => {
  it('sees the tree (a checker gone blind would pass)', () => {
    for (const layer of [
      'domain',
      'store',
      'gate',
      'recall',
      'engine',
      'root',
      'cli',
      'adapters',
    ] as const) {
      expect([...tree.keys()].some((f) => layerOf(f) === layer)).toBe(true);
    }
    expect([...tree.values()].flatMap(importsOf).length).toBeGreaterThan(300);
  });

  it('keeps every file to the imports its layer allows', () => {
    expect(checkLayering(tree)).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(findCycles(tree)).toEqual([]);
  });

  it('lists exceptions that are still needed', () => {
    for (const e of EXCEPTIONS) {
      const text = tree.get(e.file);
      expect(text, e.file).toBeDefined();
      const layers = importsOf(text ?? '').map(({ spec }) => {
        const target = resolveLocal(e.file, spec);
        return target === null ? null : layerOf(target);
      });
      for (const layer of e.imports) expect(layers, `${e.file} → ${layer}`).toContain(layer);
    }
  });
});

describe('the layering checker (negative controls)', () => {
  const fixture = (files: Record<string, string>): Map<string, string> =>
    new Map(Object.entries(files));
  const base = {
    'src/domain/thing.ts': 'export interface Thing {\n  id: string;\n}\n',
    'src/recall/rank.ts':
      "import type { Thing } from '../domain/thing.js';\nexport const rank = 1;\n",
  };

  it('reports a store file that imports recall, and nothing else', () => {
    const tree = fixture({
      ...base,
      'src/store/thing-sql.ts': `import type { Thing } from '../domain/thing.js';
import { rank } from '../recall/rank.js';
export const use = (t: Thing) => rank + t.id.length;
`,
    });
    expect(checkLayering(tree)).toEqual([
      'src/store/thing-sql.ts imports src/recall/rank.ts (store may import domain)',
    ]);
  });

  it('reports I/O in a pure layer, a driver outside the engines, and a file outside the layout', () => {
    const tree = fixture({
      ...base,
      'src/gate/read.ts': "import { readFileSync } from 'node:fs';\nexport { readFileSync };\n",
      'src/recall/raw.ts': "import pg from 'pg';\nexport { pg };\n",
      'src/misc/helper.ts': 'export const x = 1;\n',
    });
    expect(checkLayering(tree)).toEqual([
      'src/gate/read.ts imports node:fs (gate does no I/O)',
      'src/recall/raw.ts imports pg (recall uses no database driver)',
      'src/misc/helper.ts is in no layer of the layout',
    ]);
  });

  it('allows a listed lateral import only as a type, and no module reaching the engine', () => {
    const tree = fixture({
      'src/crypto/signer.ts': 'export interface Signer {}\nexport const sign = 1;\n',
      'src/engine.ts': 'export const createEngine = 1;\n',
      'src/gate/typed.ts':
        "import type { Signer } from '../crypto/signer.js';\nexport type S = Signer;\n",
      'src/gate/valued.ts': "import { sign } from '../crypto/signer.js';\nexport const s = sign;\n",
      'src/ledger/up.ts':
        "import { createEngine } from '../engine.js';\nexport const e = createEngine;\n",
    });
    expect(checkLayering(tree)).toEqual([
      'src/gate/valued.ts imports src/crypto/signer.ts (gate may import domain, store, crypto (types), trust (types))',
      'src/ledger/up.ts imports src/engine.ts (ledger may import domain, store)',
    ]);
  });

  it('keeps the CLI and the eval harness on the public root, and bench off the CLI', () => {
    const tree = fixture({
      'src/index.ts': "export { createEngine } from './engine.js';\n",
      'src/engine.ts': 'export const createEngine = 1;\n',
      'src/domain/errors.ts': 'export class EngineError extends Error {}\n',
      'src/store/open-store.ts': "export const DEFAULT_DB = './.memledger';\n",
      'cli/ok.ts':
        "import { createEngine } from '../src/index.js';\nexport const a = createEngine;\n",
      'cli/pure.ts':
        "import { EngineError } from '../src/domain/errors.js';\nexport const p = EngineError;\n",
      'cli/deep.ts':
        "import { createEngine } from '../src/engine.js';\nexport const b = createEngine;\n",
      'cli/store.ts':
        "import { DEFAULT_DB } from '../src/store/open-store.js';\nexport const s = DEFAULT_DB;\n",
      'server/lazy.ts':
        "export const l = async () => (await import('../src/engine.js')).createEngine;\n",
      'bench/borrow.ts': "import { a } from '../cli/ok.js';\nexport const c = a;\n",
      'eval/run.ts':
        "import { createEngine } from '../src/engine.js';\nexport const d = createEngine;\n",
      'eval/up.ts': "import { a } from '../cli/ok.js';\nexport const e = a;\n",
    });
    expect(checkLayering(tree)).toEqual([
      'cli/deep.ts imports src/engine.ts (cli may import domain, root, server, eval, adapters)',
      'cli/store.ts imports src/store/open-store.ts (cli may import domain, root, server, eval, adapters)',
      'server/lazy.ts imports src/engine.ts (server may import domain, root)',
      'bench/borrow.ts imports cli/ok.ts (bench may import domain, store, trust, gate, ledger, probes, arrival, recall, history, access, reflection, transfer, crypto, pglite, postgres, engine, root, eval)',
      'eval/run.ts imports src/engine.ts (eval may import root)',
      'eval/up.ts imports cli/ok.ts (eval may import root)',
    ]);
  });

  it('finds a cycle', () => {
    const tree = fixture({
      'src/recall/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'src/recall/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
    });
    expect(findCycles(tree)).toEqual(['src/recall/a.ts -> src/recall/b.ts -> src/recall/a.ts']);
  });
});
