import { Transform, type Readable, type Writable } from 'node:stream';
import {
  serializeMessage,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type JSONRPCErrorResponse,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import {
  serveStdio,
  StdioServerTransport,
  type StdioServerHandle,
} from '@modelcontextprotocol/server/stdio';
import { inboundRefusal, parseErrorAnswer } from './mcp-inbound.js';

const NEWLINE = 0x0a;

/**
 * The lines of `input` the SDK's stdio transport may read. The SDK drops a line that is not
 * JSON, or not a message it takes (params that are an array…), without a word, so the client
 * waits forever: here such a line is answered (`reply`) with -32700 or -32600, a request whose
 * params its method does not take with -32602 (`inboundRefusal`), and every other line passes
 * as it came. Blank lines are dropped, as the SDK drops them. A line longer than the SDK's
 * buffer passes unread, so the SDK ends the connection as it always has.
 */
export function checkedLines(
  input: Readable,
  reply: (answer: JSONRPCErrorResponse) => void,
): Readable {
  let parts: Buffer[] = [];
  let size = 0;
  let unread = false;
  const check = (line: Buffer): Buffer | null => {
    const text = line.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return null;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      reply(parseErrorAnswer());
      return null;
    }
    const refusal = inboundRefusal(message);
    if (refusal === null) return line;
    reply(refusal);
    return null;
  };
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (unread) return done(null, chunk);
      let from = 0;
      for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
        const line = Buffer.concat([...parts, chunk.subarray(from, at + 1)]);
        parts = [];
        size = 0;
        from = at + 1;
        const passed = check(line.subarray(0, line.length - 1));
        if (passed !== null) this.push(line);
      }
      const rest = chunk.subarray(from);
      if (rest.length > 0) {
        parts.push(rest);
        size += rest.length;
      }
      if (size > STDIO_DEFAULT_MAX_BUFFER_SIZE) {
        unread = true;
        this.push(Buffer.concat(parts));
        parts = [];
      }
      done();
    },
  });
  return input.pipe(lines);
}

export interface McpStdioOptions {
  /** Out-of-band failures (reporting only). */
  onerror: (error: Error) => void;
  /** Default: the process's stdin and stdout. */
  stdin?: Readable;
  stdout?: Writable;
}

/** `memledger mcp`: MCP over stdio through `checkedLines`, one server from `factory`. */
export function serveMcpStdio(
  factory: McpServerFactory,
  options: McpStdioOptions,
): StdioServerHandle {
  const stdout = options.stdout ?? process.stdout;
  const stdin = checkedLines(options.stdin ?? process.stdin, (answer) => {
    stdout.write(serializeMessage(answer));
  });
  return serveStdio(factory, {
    transport: new StdioServerTransport(stdin, stdout),
    onerror: options.onerror,
  });
}
