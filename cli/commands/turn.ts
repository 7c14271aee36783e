import { EngineError, type AddTurnResult, type ResponseBlock } from '../../src/index.js';
import { flag, listValue, stringValue } from '../args.js';
import type { CommandContext } from '../context.js';

export const TURN_ADD_OPTIONS = {
  session: { type: 'string' },
  role: { type: 'string' },
  text: { type: 'string' },
  'blocks-file': { type: 'string' },
  tools: { type: 'string' },
  sources: { type: 'string' },
  'no-tools': { type: 'boolean' },
  utility: { type: 'boolean' },
  corrective: { type: 'boolean' },
  speaker: { type: 'string' },
} as const;

function parseBlocks(raw: string, path: string): ResponseBlock[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (err) {
    throw new EngineError('INVALID_ARGUMENT', `${path} is not JSON: ${(err as Error).message}`);
  }
  const blocks = Array.isArray(parsed) ? parsed : (parsed as { content?: unknown } | null)?.content;
  if (
    !Array.isArray(blocks) ||
    !blocks.every(
      (b) =>
        b !== null && typeof b === 'object' && typeof (b as { type?: unknown }).type === 'string',
    )
  ) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `${path} must hold an array of content blocks with a "type"`,
    );
  }
  return blocks as ResponseBlock[];
}

function describe(result: AddTurnResult): { json: unknown; text: string } {
  if (!result.recorded) {
    return {
      json: { recorded: false, utility: result.utility, requests: result.requests },
      text: `utility request (${result.utility}) counted, not recorded`,
    };
  }
  const { turn } = result;
  return {
    json: {
      recorded: true,
      turnId: turn.id,
      seq: turn.seq,
      role: turn.role,
      content: turn.content,
      receipt: turn.receipt,
      strippedReceipts: result.strippedReceipts,
    },
    text: `recorded #${turn.seq} (${turn.role})${result.strippedReceipts > 0 ? `, removed ${result.strippedReceipts} imitated receipt(s)` : ''}`,
  };
}

export async function turnAddCommand(ctx: CommandContext): Promise<void> {
  const { values } = ctx;
  const sessionId = stringValue(values, 'session');
  const blocksFile = stringValue(values, 'blocks-file');
  const text = stringValue(values, 'text');
  let result: AddTurnResult;
  if (blocksFile !== undefined) {
    if (
      text !== undefined ||
      values.tools !== undefined ||
      values.sources !== undefined ||
      values['no-tools'] === true
    ) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        '--blocks-file carries the text and the receipt; do not combine it with --text, --tools, --sources or --no-tools',
      );
    }
    const role = stringValue(values, 'role');
    if (role !== undefined && role !== 'assistant') {
      throw new EngineError('INVALID_ARGUMENT', '--blocks-file records an assistant response');
    }
    let raw: string;
    try {
      raw = await ctx.io.readFile(blocksFile);
    } catch (err) {
      throw new EngineError(
        'INVALID_ARGUMENT',
        `cannot read ${blocksFile}: ${(err as Error).message}`,
      );
    }
    const blocks = parseBlocks(raw, blocksFile);
    result = await ctx.withEngine(false, (engine) =>
      engine.turns.recordResponse({ sessionId, blocks }),
    );
  } else {
    const tools = listValue(values, 'tools');
    const sources = listValue(values, 'sources');
    const speaker = stringValue(values, 'speaker');
    result = await ctx.withEngine(false, (engine) =>
      engine.turns.add({
        sessionId,
        role: stringValue(values, 'role') ?? '',
        content: text ?? '',
        receipt: {
          ...(tools === undefined ? {} : { tools }),
          ...(sources === undefined ? {} : { sources }),
          noTools: flag(values, 'no-tools'),
        },
        utility: flag(values, 'utility'),
        corrective: flag(values, 'corrective'),
        ...(speaker === undefined ? {} : { speaker }),
      }),
    );
  }
  const out = describe(result);
  ctx.print(out.json, () => out.text);
}
