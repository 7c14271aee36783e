import type { Client } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { toolErrorSchema } from '../../server/mcp/mcp-schemas.js';

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
