import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { SourceText } from './sql-columns.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Every `.ts` file under src/, except the migrations (DDL, not the engine's reads and writes). */
export function engineSources(): SourceText[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const path = join(dir, e.name);
      if (e.isDirectory()) return walk(path);
      return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
    });
  return walk(join(ROOT, 'src'))
    .map((abs) => relative(ROOT, abs).split(sep).join('/'))
    .filter((path) => !path.startsWith('src/store/migrations/'))
    .map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));
}
