import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { EngineError } from '../../src/index.js';
import type { Caller } from '../access.js';
import type { OperationSpec } from '../operations/operation.js';
import { OPERATION_TABLE, mayRunSpec, requireRole } from '../operations/table.js';
import { protocolError, toolError, type InternalErrorSink } from './mcp-errors.js';
import { MCP_INSTRUCTIONS } from './mcp-instructions.js';
import { advertised, idText, parseArguments, text } from './mcp-schemas.js';
import { derivedTool, type McpTool, type McpToolAdapter } from './mcp-tool.js';
import { CONVERSATION_TOOLS } from './tools-conversation.js';
import { GROUND_TOOLS } from './tools-ground.js';
import { arrivalJson, arrivalMessage, DEFAULT_SURFACE, MEMORY_TOOLS } from './tools-memory.js';

/** The tools whose shapes are their own (prose answers, MCP-specific arguments), by name. */
const ADAPTERS: readonly McpToolAdapter[] = [
  ...CONVERSATION_TOOLS,
  ...MEMORY_TOOLS,
  ...GROUND_TOOLS,
];

/** The prompt and the resource this face implements, each named by one operation of the table. */
const PROMPTS = ['arrival'] as const;
const RESOURCES = ['arrival'] as const;

/**
 * The tools the operation table names, each bound to its operation: an adapter of the same name,
 * or one derived from the operation's call. Throws when the table and the adapters disagree: a
 * tool with neither or both, an adapter no operation names, a tool named twice, or a prompt or
 * resource the face does not implement.
 */
export function toolsFor(operations: readonly OperationSpec[]): McpTool[] {
  const tools: McpTool[] = [];
  const problems: string[] = [];
  for (const op of operations) {
    for (const name of op.mcp?.tools ?? []) {
      const adapter = ADAPTERS.find((a) => a.name === name);
      if (adapter !== undefined && op.call !== undefined)
        problems.push(`${name} is an adapter and a call`);
      else if (adapter !== undefined) tools.push({ ...adapter, operation: op });
      else if (op.call !== undefined) tools.push({ ...derivedTool(name, op), operation: op });
      else problems.push(`${name} (${op.name}) has no adapter and no call`);
    }
    for (const p of op.mcp?.prompts ?? []) {
      if (!(PROMPTS as readonly string[]).includes(p)) problems.push(`no prompt ${p}`);
    }
    for (const r of op.mcp?.resources ?? []) {
      if (!(RESOURCES as readonly string[]).includes(r)) problems.push(`no resource ${r}`);
    }
  }
  const names = tools.map((t) => t.name);
  problems.push(
    ...ADAPTERS.filter((a) => !names.includes(a.name)).map((a) => `${a.name} is in no operation`),
    ...names.filter((n, i) => names.indexOf(n) !== i).map((n) => `${n} is named twice`),
  );
  if (problems.length > 0) {
    throw new Error(`the MCP tools and the operation table disagree: ${problems.join('; ')}`);
  }
  return tools;
}

/** The operation that names an MCP prompt or resource. */
function namedBy(
  operations: readonly OperationSpec[],
  kind: 'prompts' | 'resources',
  name: string,
): OperationSpec {
  const op = operations.find((o) => o.mcp?.[kind]?.includes(name) === true);
  if (op === undefined) throw new Error(`no operation of the table names the ${kind} ${name}`);
  return op;
}

/** Every tool the MCP face offers. None approves, rejects, signs, delegates or manages tokens. */
export const MCP_TOOLS: readonly McpTool[] = toolsFor(OPERATION_TABLE);

/** Each tool, prompt and resource by name, with the one operation of the table it runs. */
export const MCP_OPERATIONS: Readonly<{
  tools: Readonly<Record<string, string>>;
  prompts: Readonly<Record<string, string>>;
  resources: Readonly<Record<string, string>>;
}> = {
  tools: Object.fromEntries(MCP_TOOLS.map((t) => [t.name, t.operation.name])),
  prompts: Object.fromEntries(PROMPTS.map((p) => [p, namedBy(OPERATION_TABLE, 'prompts', p).name])),
  resources: Object.fromEntries(
    RESOURCES.map((r) => [r, namedBy(OPERATION_TABLE, 'resources', r).name]),
  ),
};

/** A URI template variable, percent-decoded: INVALID_ARGUMENT when it is not one valid value. */
function variable(value: string | string[] | undefined, field: string): string {
  try {
    if (typeof value === 'string') return decodeURIComponent(value);
  } catch {
    // fall through: a malformed percent escape
  }
  throw new EngineError('INVALID_ARGUMENT', `the resource URI needs one valid ${field}`, {
    data: { field },
  });
}

export interface McpServerConfig {
  /**
   * Runs before every request: a long-lived connection (stdio) re-authenticates its token here,
   * so a revoked token stops working at once.
   */
  recheck?: () => Promise<void>;
  /** Where failures that are not EngineErrors go (the client sees only INTERNAL). */
  onInternalError?: InternalErrorSink;
  /**
   * The operation table the tools are made from (default `OPERATION_TABLE`). It must hold every
   * operation of the table; one added to it with a call and an MCP tool is offered as a derived tool.
   */
  operations?: readonly OperationSpec[];
}

const VERSION = '0.1.0';

const arrivalArgs = z.strictObject({
  surface: text(64).optional().describe(`the surface (default ${DEFAULT_SURFACE})`),
  sessionId: idText.optional(),
  message: arrivalMessage,
});

/** An MCP server acting for one caller: its subject only, within its role. */
export function createMcpServer(caller: Caller, config: McpServerConfig = {}): McpServer {
  const { recheck, onInternalError } = config;
  const server = new McpServer(
    { name: 'memledger', version: VERSION },
    { instructions: MCP_INSTRUCTIONS },
  );
  const operations = config.operations ?? OPERATION_TABLE;
  const tools = config.operations === undefined ? MCP_TOOLS : toolsFor(operations);
  const arrivalPrompt = namedBy(operations, 'prompts', 'arrival');
  const arrivalResource = namedBy(operations, 'resources', 'arrival');
  const allowed = async (op: OperationSpec): Promise<void> => {
    await recheck?.();
    requireRole(caller, op);
  };

  // a token is shown only the tools its role may run (each call is checked again all the same)
  for (const tool of tools.filter((t) => mayRunSpec(caller.role, t.operation))) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: advertised(tool.input),
        outputSchema: tool.output,
        annotations: {
          readOnlyHint: tool.readOnly,
          destructiveHint: false,
          openWorldHint: tool.name === 'run_probe',
        },
      },
      async (args) => {
        try {
          await allowed(tool.operation);
          const answer = await tool.call(caller.handle, args);
          return {
            content: [{ type: 'text', text: answer.text }],
            structuredContent: answer.structured,
          };
        } catch (err) {
          return toolError(err, onInternalError);
        }
      },
    );
  }

  server.registerPrompt(
    'arrival',
    {
      title: 'Arrival context',
      description:
        'The context to load at the start of a session: standing rules, live memory with passports, ground truth and the review pile count.',
      argsSchema: advertised(arrivalArgs),
    },
    async (args) => {
      try {
        await allowed(arrivalPrompt);
        const { surface, sessionId, message } = parseArguments(arrivalArgs, args);
        const arrival = await arrivalJson(
          caller.handle,
          surface ?? DEFAULT_SURFACE,
          sessionId,
          message,
        );
        return {
          description: `memledger arrival for surface ${arrival.surface} (manifest ${arrival.manifestId})`,
          messages: [{ role: 'user', content: { type: 'text', text: arrival.text } }],
        };
      } catch (err) {
        throw protocolError(err, onInternalError);
      }
    },
  );

  server.registerResource(
    'arrival',
    new ResourceTemplate('memledger://arrival/{surface}', {
      list: () => ({
        resources: [
          {
            uri: `memledger://arrival/${DEFAULT_SURFACE}`,
            name: `arrival-${DEFAULT_SURFACE}`,
            mimeType: 'text/plain',
          },
        ],
      }),
    }),
    {
      title: 'Arrival context',
      description: 'The arrival for a surface, assembled when read (each read records a manifest).',
      mimeType: 'text/plain',
    },
    async (uri, variables) => {
      try {
        await allowed(arrivalResource);
        const surface = variable(variables.surface, 'surface');
        const arrival = await arrivalJson(caller.handle, surface, undefined);
        return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: arrival.text }] };
      } catch (err) {
        throw protocolError(err, onInternalError);
      }
    },
  );
  return server;
}
