import { z } from 'zod';
import type { OperationSpec } from './operation.js';

/** A markdown table as prettier writes one: each column as wide as its widest cell. */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const code = (s: string): string => `\`${s}\``;

/** Where HTTP reaches an operation, as the docs name it: `GET /v1/sessions`. */
function httpCell(op: OperationSpec): string {
  return op.http === undefined ? '—' : code(`${op.http.method.toUpperCase()} ${op.http.path}`);
}

/** Where MCP reaches an operation: its tools, then the prompts and resources that run it. */
function mcpCell(op: OperationSpec): string {
  const tools = (op.mcp?.tools ?? []).map(code);
  const prompts = op.mcp?.prompts ?? [];
  const resources = op.mcp?.resources ?? [];
  const named = [
    ...prompts.map((p) =>
      resources.includes(p) ? `the ${code(p)} prompt and resource` : `the ${code(p)} prompt`,
    ),
    ...resources.filter((r) => !prompts.includes(r)).map((r) => `the ${code(r)} resource`),
  ];
  const all = [...tools, ...named];
  return all.length === 0 ? '—' : all.join(', ');
}

/** The role table of docs/SERVER.md: each operation, its least role, and where each face runs it. */
export function renderRoleTable(operations: readonly OperationSpec[]): string {
  return markdownTable(
    ['operation', 'least role', 'HTTP', 'MCP'],
    operations.map((op) => [code(op.name), op.role, httpCell(op), mcpCell(op)]),
  );
}

/** The fields of a declared input, from its JSON Schema: `name` (type), `name?` when optional. */
function inputFields(input: z.ZodObject): string {
  const schema = z.toJSONSchema(input, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, { type?: unknown }>;
    required?: string[];
  };
  const fields = Object.entries(schema.properties ?? {}).map(([name, p]) => {
    const optional = schema.required?.includes(name) === true ? '' : '?';
    const type = typeof p.type === 'string' ? ` (${p.type})` : '';
    return `${code(`${name}${optional}`)}${type}`;
  });
  return fields.length === 0 ? 'none' : fields.join(', ');
}

/** The operations reference of docs/API.md: one line per operation, with its faces and input. */
export function renderOperationReference(operations: readonly OperationSpec[]): string {
  return operations
    .map((op) => {
      const faces = [
        op.http === undefined ? null : `HTTP ${httpCell(op)}`,
        op.mcp === undefined ? null : `MCP ${mcpCell(op)}`,
      ].filter((f): f is string => f !== null);
      const input = op.call === undefined ? '' : ` Input: ${inputFields(op.call.input)}.`;
      return `- ${code(op.name)} (${op.role}): ${op.doc}. ${faces.join('; ')}.${input}`;
    })
    .join('\n');
}

/** The generated sections: which file, between which markers, made by what. */
export const GENERATED_SECTIONS = [
  { file: 'docs/SERVER.md', marker: 'operations', render: renderRoleTable },
  { file: 'docs/API.md', marker: 'operation-reference', render: renderOperationReference },
] as const;

/** `doc` with the section between `<!-- marker:start -->` and `<!-- marker:end -->` set to `body`. */
export function withSection(doc: string, marker: string, body: string): string {
  const start = `<!-- ${marker}:start -->`;
  const end = `<!-- ${marker}:end -->`;
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from === -1 || to < from) throw new Error(`the doc has no ${start} … ${end} section`);
  return `${doc.slice(0, from + start.length)}\n\n${body}\n\n${doc.slice(to)}`;
}
