// A pure layer that imports I/O, or a cycle between modules, is how a layout stops being true.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map(
    (m) => m[1] as string,
  );
  const dynamic = [...text.matchAll(/import\('([^']+)'\)/g)].map((m) => m[1] as string);
  return [...specs, ...dynamic];
}

function resolveLocal(file: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  return relative(ROOT, resolve(ROOT, dirname(file), spec.replace(/\.js$/, '.ts')));
}

const files = [...sourceFiles('src'), ...sourceFiles('cli')];

describe('layering', () => {
  it('keeps src/domain free of I/O, drivers and other layers', () => {
    const offenders = files
      .filter((f) => f.startsWith('src/domain/'))
      .flatMap((f) =>
        importsOf(f)
          .filter((spec) => {
            if (spec.startsWith('node:') || spec === 'pg' || spec.startsWith('@electric-sql/'))
              return true;
            const target = resolveLocal(f, spec);
            return target !== null && !target.startsWith('src/domain/');
          })
          .map((spec) => `${f} imports ${spec}`),
      );
    expect(offenders).toEqual([]);
  });

  it('lets only the engine opener name an engine implementation', () => {
    const offenders = files
      .filter((f) => !f.startsWith('src/pglite/') && !f.startsWith('src/postgres/'))
      .filter((f) => f !== 'src/store/open-store.ts')
      .flatMap((f) =>
        importsOf(f)
          .map((spec) => resolveLocal(f, spec))
          .filter((t): t is string => t !== null && /^src\/(pglite|postgres)\//.test(t))
          .map((t) => `${f} imports ${t}`),
      );
    expect(offenders).toEqual([]);
  });

  it('has the CLI call the engine only through src/index.ts', () => {
    const offenders = files
      .filter((f) => f.startsWith('cli/'))
      .flatMap((f) =>
        importsOf(f)
          .map((spec) => resolveLocal(f, spec))
          .filter((t): t is string => t !== null && t.startsWith('src/') && t !== 'src/index.ts')
          .map((t) => `${f} imports ${t}`),
      );
    expect(offenders).toEqual([]);
  });

  it('has no import cycles', () => {
    const graph = new Map(
      files.map((f) => [
        f,
        importsOf(f)
          .map((spec) => resolveLocal(f, spec))
          .filter((t): t is string => t !== null && files.includes(t)),
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
    for (const f of files) visit(f, []);
    expect(cycles).toEqual([]);
  });
});
