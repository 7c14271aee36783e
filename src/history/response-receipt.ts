import type { HostReceiptReport } from '../domain/receipt.js';
import type { ResponseBlock } from './text-join.js';

const TOOL_BLOCK_TYPES = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

function urlsIn(value: unknown, out: string[]): void {
  if (Array.isArray(value)) {
    for (const item of value) urlsIn(item, out);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const url = (value as { url?: unknown }).url;
    if (typeof url === 'string' && url.length > 0 && !out.includes(url)) out.push(url);
    const content = (value as { content?: unknown }).content;
    if (content !== undefined) urlsIn(content, out);
  }
}

/**
 * Reads the receipt from the structured blocks the model API returned (tool calls, tool
 * results, citations): what the host observed, never what the model wrote in its prose.
 * A complete response without tool blocks is evidence that no tool ran.
 */
export function receiptReportFromBlocks(blocks: readonly ResponseBlock[]): HostReceiptReport {
  const tools: string[] = [];
  const sources: string[] = [];
  for (const block of blocks) {
    if (TOOL_BLOCK_TYPES.has(block.type)) {
      const name = (block as { name?: unknown }).name;
      const tool = typeof name === 'string' && name.length > 0 ? name : block.type;
      if (!tools.includes(tool)) tools.push(tool);
    } else if (block.type.endsWith('_tool_result')) {
      urlsIn((block as { content?: unknown }).content, sources);
    } else if (block.type === 'text') {
      urlsIn((block as { citations?: unknown }).citations, sources);
    }
  }
  if (tools.length === 0 && sources.length === 0) return { noTools: true };
  if (tools.length === 0) return { tools: ['unnamed_tool'], sources };
  return { tools, sources };
}
