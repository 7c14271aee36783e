// A short command spends its time loading modules: the CLI loads the engine (src/index.ts,
// src/engine.ts) and eval/ only when a command opens a store or runs a bench, by `import()`.
import { readFileSync } from 'node:fs';
import { posix, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as defaults from '../src/domain/defaults.js';
import { DEFAULT_DB, DEFAULT_SUBJECT } from '../src/index.js';

const ROOT = resolve(import.meta.dirname, '..');

/**
 * The files `entry` loads as it starts: its static imports, followed. `import type` loads nothing;
 * `import { type X }` still loads its module (verbatimModuleSyntax keeps it), and is followed.
 */
function loadedAtStart(entry: string, read: (file: string) => string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = read(file);
    const specs = [
      ...text.matchAll(/^(?:import|export)(?!\s+type\b)[^;'"]*?\bfrom\s+'(\.[^']+)'/gm),
      ...text.matchAll(/^import\s+'(\.[^']+)'/gm),
    ].map((m) => m[1] as string);
    for (const spec of specs) {
      visit(posix.normalize(posix.join(posix.dirname(file), spec.replace(/\.js$/, '.ts'))));
    }
  };
  visit(entry);
  return seen;
}

const heavy = (files: Set<string>): string[] =>
  [...files].filter((f) => f === 'src/index.ts' || f === 'src/engine.ts' || f.startsWith('eval/'));

describe('the CLI at start-up', () => {
  it('loads neither the engine nor eval/ before a command runs', () => {
    const files = loadedAtStart('cli/main.ts', (f) => readFileSync(resolve(ROOT, f), 'utf8'));
    expect(files.has('cli/commands/turn.ts')).toBe(true);
    expect(files.has('src/domain/errors.ts')).toBe(true);
    expect(heavy(files)).toEqual([]);
  });

  it('negative control: a value import of the root, inline type-only or not, is followed', () => {
    const tree: Record<string, string> = {
      'cli/main.ts': "import { a } from './a.js';\nimport type { T } from '../src/engine.js';\n",
      'cli/a.ts': "import { type ErrorCode } from '../src/index.js';\nexport const a = 1;\n",
      'src/index.ts': "export { b } from './engine.js';\n",
      'src/engine.ts': 'export const b = 1;\n',
    };
    expect(heavy(loadedAtStart('cli/main.ts', (f) => tree[f] ?? ''))).toEqual([
      'src/index.ts',
      'src/engine.ts',
    ]);
  });

  it('reads the defaults the engine uses', () => {
    expect(defaults.DEFAULT_DB).toBe(DEFAULT_DB);
    expect(defaults.DEFAULT_SUBJECT).toBe(DEFAULT_SUBJECT);
  });
});
