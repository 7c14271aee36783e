import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The text of a doc between `<!-- marker:start -->` and `<!-- marker:end -->` (`file` from the
 * repository's root); throws when the doc has no such section, so a test never reads nothing.
 */
export function docSection(file: string, marker: string): string {
  const doc = readFileSync(resolve(import.meta.dirname, '../..', file), 'utf8');
  const start = `<!-- ${marker}:start -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(`<!-- ${marker}:end -->`);
  if (from === -1 || to < from) throw new Error(`${file} has no ${marker} section`);
  return doc.slice(from + start.length, to);
}
