// docs/SERVER.md's role table drifting from the operation table would tell an operator a reader cannot do what it can.
import { describe, expect, it } from 'vitest';
import { docSection } from './support/doc-section.js';
import { createEngine } from '../src/index.js';
import { createHttpApp } from '../server/http/app.js';
import { OPERATION_KEY } from '../server/http/route-kit.js';
import { MCP_OPERATIONS } from '../server/mcp/mcp-server.js';
import {
  mayRun,
  OPERATIONS,
  requireOperation,
  type Operation,
} from '../server/operations/table.js';

const table = docSection('docs/SERVER.md', 'operations');
/** The table's rows: operation, role, and the backquoted names in its HTTP and MCP cells. */
const rows = [
  ...table.matchAll(/^\| `([a-zA-Z.]+)`\s*\| (reader|agent)\s*\|([^|]*)\|([^|]*)\|$/gm),
].map((m) => ({
  op: m[1] ?? '',
  role: m[2] ?? '',
  http: [...(m[3] ?? '').matchAll(/`([^`]+)`/g)].map((x) => x[1]),
  mcp: [...(m[4] ?? '').matchAll(/`([^`]+)`/g)].map((x) => x[1]),
}));
const group = (pairs: Array<[string, string]>): Record<string, string[]> => {
  const out: Record<string, string[]> = {};
  for (const [op, name] of pairs) (out[op] ??= []).push(name);
  for (const names of Object.values(out)) names.sort();
  return out;
};

describe('the role table', () => {
  it('docs/SERVER.md lists exactly the operations of the operation table, with their roles', () => {
    expect(rows.length).toBeGreaterThan(10);
    expect(Object.fromEntries(rows.map((r) => [r.op, r.role]))).toEqual(OPERATIONS);
  });

  it('names, for each operation, the HTTP routes and MCP tools that run it, as the code has them', async () => {
    const engine = await createEngine({ db: 'memory://' });
    try {
      const api = (await (await createHttpApp({ engine }).request('/openapi.json')).json()) as {
        paths: Record<string, Record<string, Record<string, unknown>>>;
      };
      const served: Array<[string, string]> = [];
      for (const [path, methods] of Object.entries(api.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          const name = op[OPERATION_KEY];
          if (typeof name === 'string') served.push([name, `${method.toUpperCase()} ${path}`]);
        }
      }
      expect(served.length).toBeGreaterThan(30);
      const documented = (key: 'http' | 'mcp') =>
        group(rows.flatMap((r) => r[key].map((n) => [r.op, n ?? ''] as [string, string])));
      expect(documented('http')).toEqual(group(served));
      const mcp: Array<[string, string]> = [
        ...Object.entries(MCP_OPERATIONS.tools).map(([t, op]) => [op, t] as [string, string]),
        ...Object.values(MCP_OPERATIONS.prompts).map((op) => [op, 'arrival'] as [string, string]),
      ];
      // the prompt and the resource are both named `arrival` in the cell: one name
      expect(documented('mcp')).toEqual(
        group([...new Map(mcp.map((p) => [p.join(' '), p])).values()]),
      );
    } finally {
      await engine.close();
    }
  });

  it('names no owner power as an operation', () => {
    const owner =
      /decide|approve|reject|delegate|declare|setKey|owner|token|register|remove|timeZone|verdict/i;
    expect(Object.keys(OPERATIONS).filter((op) => owner.test(op))).toEqual([]);
  });

  it('lets an agent run everything a reader may, and a reader nothing an agent needs', () => {
    for (const op of Object.keys(OPERATIONS) as Operation[]) {
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
