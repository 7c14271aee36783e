import { readFileSync } from 'node:fs';

/**
 * docs/SCALE.md's tables, as the scale tests read them: the rows between
 * `<!-- scale-keys: NAME -->` and `<!-- /scale-keys -->`.
 */

export type Placement =
  { kind: 'distributed'; column: string; why: string } | { kind: 'reference'; why: string };

export const SCALE_DOC = readFileSync(new URL('../../docs/SCALE.md', import.meta.url), 'utf8');

/** The rows of the doc table between `<!-- scale-keys: NAME -->` and `<!-- /scale-keys -->`. */
export function docTable(doc: string, name: string): string[][] {
  const start = doc.indexOf(`<!-- scale-keys: ${name} -->`);
  const end = doc.indexOf('<!-- /scale-keys -->', start);
  if (start < 0 || end < 0) throw new Error(`docs/SCALE.md has no "${name}" table`);
  return doc
    .slice(start, end)
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2) // the header and its rule
    .map((l) =>
      l
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

/** The first `name` in a cell. */
export const ident = (cell: string | undefined): string => /`([^`]+)`/.exec(cell ?? '')?.[1] ?? '';

/** The placement table: each table, distributed by a column or a reference table. */
export function planFromDoc(doc: string): Map<string, Placement> {
  const plan = new Map<string, Placement>();
  for (const [table, placement, column, why = ''] of docTable(doc, 'placement')) {
    const name = ident(table);
    if (placement === 'distributed')
      plan.set(name, { kind: 'distributed', column: ident(column), why });
    else if (placement === 'reference') plan.set(name, { kind: 'reference', why });
    else throw new Error(`docs/SCALE.md: ${name} has no placement (${placement ?? ''})`);
  }
  return plan;
}
