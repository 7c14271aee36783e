// Every error code the engine can throw is documented, and the docs name no code that is gone.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/index.js';

const doc = readFileSync(resolve(import.meta.dirname, '../docs/ERRORS.md'), 'utf8');
const documented = [...doc.matchAll(/^\| `([A-Z_]+)`\s*\|/gm)].map((m) => m[1]);

describe('docs/ERRORS.md', () => {
  it('documents every error code', () => {
    expect(ERROR_CODES.filter((c) => !documented.includes(c))).toEqual([]);
  });
  it('documents no code the engine does not have', () => {
    expect(documented.filter((c) => !(ERROR_CODES as readonly string[]).includes(c ?? ''))).toEqual(
      [],
    );
  });
});
