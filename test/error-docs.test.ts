// Every error code the engine, the servers or the CLI can throw is documented in its own section
// of docs/ERRORS.md, and the docs name no code that is gone.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI_ERROR_CODES } from '../cli/errors.js';
import { SERVER_ERROR_CODES } from '../server/server-errors.js';
import { ERROR_CODES } from '../src/index.js';

const doc = readFileSync(resolve(import.meta.dirname, '../docs/ERRORS.md'), 'utf8');
const serversAt = doc.indexOf('\n## Servers\n');
const cliAt = doc.indexOf('\n## CLI\n');
const codesIn = (text: string): string[] =>
  [...text.matchAll(/^\| `([A-Z_]+)`\s*\|/gm)].map((m) => m[1] ?? '');

describe('docs/ERRORS.md', () => {
  it('has a Servers section after the engine codes, and a CLI section after it', () => {
    expect(serversAt).toBeGreaterThan(0);
    expect(cliAt).toBeGreaterThan(serversAt);
  });

  const sections: Array<[string, string[], readonly string[]]> = [
    ['engine', codesIn(doc.slice(0, serversAt)), ERROR_CODES],
    ['server', codesIn(doc.slice(serversAt, cliAt)), SERVER_ERROR_CODES],
    ['CLI', codesIn(doc.slice(cliAt)), CLI_ERROR_CODES],
  ];
  for (const [name, documented, codes] of sections) {
    it(`documents every ${name} error code in its section`, () => {
      expect(codes.filter((c) => !documented.includes(c))).toEqual([]);
    });
    it(`documents no ${name} code that does not exist`, () => {
      expect(documented.filter((c) => !codes.includes(c))).toEqual([]);
    });
  }

  it('gives the servers and the CLI no code the engine has, and the CLI none the servers have', () => {
    const engine: readonly string[] = ERROR_CODES;
    const servers: readonly string[] = SERVER_ERROR_CODES;
    expect(SERVER_ERROR_CODES.filter((c) => engine.includes(c))).toEqual([]);
    expect(CLI_ERROR_CODES.filter((c) => engine.includes(c) || servers.includes(c))).toEqual([]);
  });
});
