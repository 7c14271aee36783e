import type { z } from 'zod';
import type { SubjectHandle } from '../../src/index.js';
import { shownJson } from '../../src/rules.js';
import type { Operation } from '../roles.js';
import { parseArguments } from './mcp-schemas.js';

/** What a tool answers: structured content (checked against its output schema) and the text. */
export interface ToolAnswer<O> {
  structured: O;
  text: string;
}

/**
 * One MCP tool: its name, the one operation of the role table it runs, its schemas, and the
 * call. `call` parses its own arguments, so a bad one is INVALID_ARGUMENT.
 */
export interface McpTool {
  readonly name: string;
  readonly operation: Operation;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output: z.ZodObject;
  /** Reads only: nothing in the store changes (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
  call(handle: SubjectHandle, args: unknown): Promise<ToolAnswer<Record<string, unknown>>>;
}

/**
 * Declares a tool; the run function is typed from its schemas. Every string of its structured
 * content is shown as a model is shown stored text (`shownJson`), unless the tool answers with
 * text memledger `rendered` (an arrival, a history: their stored strings were shown when they were
 * rendered, and their receipt lines are memledger's own). Its text answer shows each stored string
 * itself (`shownInline`).
 */
export function defineTool<I extends z.ZodType, O extends z.ZodObject>(def: {
  name: string;
  operation: Operation;
  title: string;
  description: string;
  input: I;
  output: O;
  readOnly?: boolean;
  rendered?: boolean;
  run(handle: SubjectHandle, input: z.output<I>): Promise<ToolAnswer<z.input<O>>>;
}): McpTool {
  const { run, readOnly, rendered, ...meta } = def;
  return {
    ...meta,
    readOnly: readOnly ?? false,
    async call(handle, args) {
      const answer = await run(handle, parseArguments(def.input, args));
      const structured = rendered === true ? answer.structured : shownJson(answer.structured);
      return { structured: structured as Record<string, unknown>, text: answer.text };
    },
  };
}

/** An ISO string for a date, null kept. */
export function iso(d: Date): string;
export function iso(d: Date | null): string | null;
export function iso(d: Date | null): string | null {
  return d === null ? null : d.toISOString();
}
