// docs/SERVER.md's role table drifting from server/roles.ts would tell an operator a reader cannot do what it can.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mayRun, OPERATIONS, requireOperation } from '../server/roles.js';

const doc = readFileSync(resolve(import.meta.dirname, '../docs/SERVER.md'), 'utf8');
const table = doc.slice(
  doc.indexOf('<!-- operations:start -->'),
  doc.indexOf('<!-- operations:end -->'),
);

describe('the role table', () => {
  it('docs/SERVER.md lists exactly the operations of server/roles.ts, with their roles', () => {
    const rows = [...table.matchAll(/^\| `([a-zA-Z.]+)`\s*\| (reader|agent)\s*\|$/gm)].map(
      (m) => [m[1], m[2]] as const,
    );
    expect(rows.length).toBeGreaterThan(10);
    expect(Object.fromEntries(rows)).toEqual(OPERATIONS);
  });

  it('names no owner power as an operation', () => {
    const owner =
      /decide|approve|reject|delegate|declare|setKey|owner|token|register|remove|timeZone|verdict/i;
    expect(Object.keys(OPERATIONS).filter((op) => owner.test(op))).toEqual([]);
  });

  it('lets an agent run everything a reader may, and a reader nothing an agent needs', () => {
    for (const op of Object.keys(OPERATIONS) as Array<keyof typeof OPERATIONS>) {
      expect(mayRun('agent', op)).toBe(true);
      expect(mayRun('reader', op)).toBe(OPERATIONS[op] === 'reader');
      if (OPERATIONS[op] === 'agent') {
        expect(() => requireOperation({ role: 'reader' }, op)).toThrow(
          expect.objectContaining({ code: 'ROLE_FORBIDDEN' }),
        );
      } else {
        expect(() => requireOperation({ role: 'reader' }, op)).not.toThrow();
      }
    }
  });
});
