import { PassThrough } from 'node:stream';
import { Client, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { callerForToken } from '../../server/access.js';
import { toolErrorSchema } from '../../server/mcp/mcp-schemas.js';
import { createMcpServer } from '../../server/mcp/mcp-server.js';
import { serveMcpStdio } from '../../server/mcp/mcp-stdio.js';
import type { Engine } from '../../src/index.js';

/** An MCP `initialize` request as one JSON-RPC line, for a test that speaks the protocol raw. */
export function initializeRequest(id: number, client: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: client, version: '1' },
    },
  });
}

/** The first text part of a tool result. */
export function textOf(result: { content?: unknown }): string {
  return (result.content as Array<{ text?: string }> | undefined)?.[0]?.text ?? '';
}

/** Calls a tool that must fail, and returns its error code. */
export async function codeOf(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).toBe(true);
  return toolErrorSchema.parse(result.structuredContent).error.code;
}

/**
 * The SDK client's side of MCP over stdio, on in-process streams: one JSON-RPC message per line
 * each way, as `memledger mcp` reads and writes them (the SDK's own stdio client spawns a process).
 */
class LinesTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private buffered = '';
  constructor(
    private readonly toServer: PassThrough,
    private readonly fromServer: PassThrough,
  ) {}
  start(): Promise<void> {
    this.fromServer.on('data', (chunk: Buffer) => {
      this.buffered += chunk.toString('utf8');
      for (let at = this.buffered.indexOf('\n'); at !== -1; at = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, at);
        this.buffered = this.buffered.slice(at + 1);
        this.onmessage?.(JSON.parse(line) as JSONRPCMessage);
      }
    });
    return Promise.resolve();
  }
  send(message: JSONRPCMessage): Promise<void> {
    this.toServer.write(`${JSON.stringify(message)}\n`);
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.toServer.end();
    this.onclose?.();
    return Promise.resolve();
  }
}

/**
 * An SDK client connected to `memledger mcp`'s stdio server (`serveMcpStdio`, line checks and
 * all) for `token`, on in-process streams. Rejects as the command does when the token is refused.
 */
export async function stdioClient(engine: Engine, token: string): Promise<Client> {
  const caller = await callerForToken(engine, token);
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const handle = serveMcpStdio(() => createMcpServer(caller), {
    stdin,
    stdout,
    onerror: () => undefined,
  });
  const client = new Client({ name: 'memledger-stdio', version: '1.0.0' });
  const close = client.close.bind(client);
  client.close = async () => {
    await close();
    await handle.close();
  };
  await client.connect(new LinesTransport(stdin, stdout));
  return client;
}
