// Every CLI command loaded Hono and the MCP SDK at start-up (about 130 of 270 ms), and a Claude Code hook runs one after every reply: only `serve` and `mcp` load the servers, when they run.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = resolve(import.meta.dirname, '../../cli');
const HEAVY = /^\s*import\s+(?!type\b)[^;]*?from\s+'([^']+)'/gm;
const isHeavy = (spec: string): boolean =>
  /^(hono|@hono\/|@modelcontextprotocol\/)/.test(spec) ||
  /\/server\/(serve\.js|http\/|mcp\/)/.test(spec);

function staticHeavyImports(text: string): string[] {
  return [...text.matchAll(HEAVY)].map((m) => m[1] ?? '').filter(isHeavy);
}

describe('the CLI at start-up', () => {
  it('imports no server face (serve, HTTP, MCP), Hono or the MCP SDK statically', () => {
    const files = readdirSync(CLI, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('.ts'),
    );
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap((f) =>
      staticHeavyImports(readFileSync(join(CLI, f), 'utf8')).map((spec) => `${f}: ${spec}`),
    );
    expect(found).toEqual([]);
  });

  it('the check finds a static import of the servers (negative control)', () => {
    expect(
      staticHeavyImports(
        "import { startServe } from '../../server/serve.js';\nimport type { X } from 'hono';\nimport { z } from '@hono/zod-openapi';\n",
      ),
    ).toEqual(['../../server/serve.js', '@hono/zod-openapi']);
    expect(staticHeavyImports("const m = await import('../../server/serve.js');")).toEqual([]);
  });
});
