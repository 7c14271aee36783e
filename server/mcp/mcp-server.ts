import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { EngineError } from '../../src/index.js';
import type { Caller } from '../access.js';
import { requireOperation, type Operation } from '../roles.js';
import { protocolError, toolError, type InternalErrorSink } from './mcp-errors.js';
import { MCP_INSTRUCTIONS } from './mcp-instructions.js';
import { advertised, idText, parseArguments, text } from './mcp-schemas.js';
import type { McpTool } from './mcp-tool.js';
import { CONVERSATION_TOOLS } from './tools-conversation.js';
import { GROUND_TOOLS } from './tools-ground.js';
import { arrivalJson, arrivalMessage, DEFAULT_SURFACE, MEMORY_TOOLS } from './tools-memory.js';

/** Every tool the MCP face offers. None approves, rejects, signs, delegates or manages tokens. */
export const MCP_TOOLS: readonly McpTool[] = [
  ...CONVERSATION_TOOLS,
  ...MEMORY_TOOLS,
  ...GROUND_TOOLS,
];

const ARRIVAL: Operation = 'arrival.assemble';

/** Each tool, prompt and resource by name, with the one operation of the role table it runs. */
export const MCP_OPERATIONS: Readonly<{
  tools: Readonly<Record<string, Operation>>;
  prompts: Readonly<Record<string, Operation>>;
  resources: Readonly<Record<string, Operation>>;
}> = {
  tools: Object.fromEntries(MCP_TOOLS.map((t) => [t.name, t.operation])),
  prompts: { arrival: ARRIVAL },
  resources: { arrival: ARRIVAL },
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
  const allowed = async (op: Operation): Promise<void> => {
    await recheck?.();
    requireOperation(caller, op);
  };

  for (const tool of MCP_TOOLS) {
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
        await allowed(ARRIVAL);
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
        await allowed(ARRIVAL);
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
