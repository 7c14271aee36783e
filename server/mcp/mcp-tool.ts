import { z } from 'zod';
import type { SubjectHandle } from '../../src/index.js';
import { shownJson } from '../../src/rules.js';
import type { OperationSpec } from '../operations/operation.js';
import { parseArguments } from './mcp-schemas.js';

/** What a tool answers: structured content (checked against its output schema) and the text. */
export interface ToolAnswer<O> {
  structured: O;
  text: string;
}

/**
 * One MCP tool: its name, its schemas, and the call. `call` parses its own arguments, so a bad one
 * is INVALID_ARGUMENT. Which operation it runs is the operation table's to say (`McpTool`).
 */
export interface McpToolAdapter {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output: z.ZodObject;
  /** Reads only: nothing in the store changes (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
  call(handle: SubjectHandle, args: unknown): Promise<ToolAnswer<Record<string, unknown>>>;
}

/** A tool as the MCP face offers it: with the operation of the table that names it. */
export interface McpTool extends McpToolAdapter {
  readonly operation: OperationSpec;
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
  title: string;
  description: string;
  input: I;
  output: O;
  readOnly?: boolean;
  rendered?: boolean;
  run(handle: SubjectHandle, input: z.output<I>): Promise<ToolAnswer<z.input<O>>>;
}): McpToolAdapter {
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

/**
 * The tool of an operation that declares its call: its arguments are the call's input, its
 * structured answer the call's output (an object, as MCP requires), its text the call's `text`
 * or the answer as JSON, each made from the answer as shown (`shownJson`); its title and
 * description are the operation's doc line.
 */
export function derivedTool(name: string, op: OperationSpec): McpToolAdapter {
  const call = op.call;
  if (call === undefined) throw new Error(`${op.name}: a derived tool needs the operation's call`);
  if (!(call.output instanceof z.ZodObject)) {
    throw new Error(`${op.name}: an MCP tool answers with an object; its output is not one`);
  }
  return defineTool({
    name,
    title: op.doc,
    description: op.doc,
    input: call.input,
    output: call.output,
    readOnly: call.readOnly,
    async run(handle, input) {
      const answer = call.output.parse(JSON.parse(JSON.stringify(await call.run(handle, input))));
      return {
        structured: answer as z.input<z.ZodObject>,
        // the text is made from the answer as shown: stored strings cannot reach it raw
        text:
          call.text === undefined
            ? JSON.stringify(shownJson(answer))
            : call.text(shownJson(answer) as typeof answer),
      };
    },
  });
}
