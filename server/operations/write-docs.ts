import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { GENERATED_SECTIONS, withSection } from './docs.js';
import { OPERATION_TABLE } from './table.js';

// `npm run docs:operations`: writes the sections of the docs made from the operation table.
for (const { file, marker, render } of GENERATED_SECTIONS) {
  const path = resolve(process.cwd(), file);
  const before = readFileSync(path, 'utf8');
  const after = withSection(before, marker, render(OPERATION_TABLE));
  if (after !== before) writeFileSync(path, after);
  process.stdout.write(`${file}: ${after === before ? 'unchanged' : 'written'}\n`);
}
