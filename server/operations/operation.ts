import type { z } from 'zod';
import type { SubjectHandle, TokenRole } from '../../src/index.js';

/** How an operation is reached over HTTP: its method and path (`{name}` a path parameter). */
export interface HttpFace {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  readonly path: string;
  /** The OpenAPI tag it is listed under. */
  readonly tag: string;
}

/** The MCP tools, prompts and resources that run an operation. */
export interface McpFace {
  readonly tools?: readonly string[];
  readonly prompts?: readonly string[];
  readonly resources?: readonly string[];
}

/**
 * An operation's input, output and call, from which each face derives itself: an HTTP route (the
 * path parameters its path names, the rest of the input from the query of a GET or the JSON body
 * of anything else), an MCP tool (the input as its arguments), and the API reference's fields. A
 * GET's query holds strings: give a number or a flag of a GET the query schemas of
 * `server/http/schemas.ts` (`intQuery`, `boolQuery`), which its MCP tool then takes as strings
 * too, or give the operation a POST. An operation whose faces need shapes of their own (a query
 * string that packs a list, a tool that answers in prose) has no `call`: each face names it with
 * an adapter instead (`server/http/routes-*.ts`, `server/mcp/tools-*.ts`), and the face refuses to
 * start when the table and its adapters disagree.
 */
export interface OperationCall<
  I extends z.ZodObject = z.ZodObject,
  O extends z.ZodType = z.ZodType,
> {
  readonly input: I;
  readonly output: O;
  /** Nothing in the store changes (MCP's `readOnlyHint`). */
  readonly readOnly: boolean;
  /**
   * Runs it on the caller's handle. The answer, as JSON (dates as ISO strings), is parsed by
   * `output`, which drops what it does not name: the engine's own entities can be answered as
   * they are.
   */
  run(handle: SubjectHandle, input: z.output<I>): Promise<unknown>;
  /** The MCP tool's text answer, from the answer as shown (default: the answer as JSON). */
  text?(output: z.output<O>): string;
}

/**
 * One operation a token may run through a face: its name, the least role that may run it, the
 * line that documents it, and where it is reached. The table of them (`OPERATION_TABLE`) is the
 * one place an operation is declared; the faces, the role table in docs/SERVER.md and the API
 * reference in docs/API.md are made from it.
 */
export interface OperationSpec {
  /** `namespace.method`, as the handle names what it runs. */
  readonly name: string;
  readonly role: TokenRole;
  /** One line: what it does (the HTTP summary, the reference's line). */
  readonly doc: string;
  readonly http?: HttpFace;
  readonly mcp?: McpFace;
  readonly call?: OperationCall;
}

/** A call, typed from its schemas (`run` sees the parsed input and answers the output). */
export function defineCall<I extends z.ZodObject, O extends z.ZodType>(
  call: OperationCall<I, O>,
): OperationCall {
  return call as unknown as OperationCall;
}

/** An operation whose faces are all derived from its call (the shape a new operation takes). */
export function defineOperation<I extends z.ZodObject, O extends z.ZodType>(
  spec: Omit<OperationSpec, 'call'> & { call: OperationCall<I, O> },
): OperationSpec {
  return spec as unknown as OperationSpec;
}
