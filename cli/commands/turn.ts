import { EngineError } from '../../src/domain/errors.js';
import { TURN_ROLES, type TurnRole } from '../../src/domain/turn.js';
import type { AddTurnResult, ResponseBlock } from '../../src/index.js';
import { defineCommand } from '../command.js';
import { SESSION_OPTION, SUBJECT_OPTION } from '../options.js';

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

/** A turn's role is required (UNKNOWN_ROLE without one, as for an unknown one). */
function requireRole(role: TurnRole | undefined): TurnRole {
  if (role === undefined) {
    throw new EngineError('UNKNOWN_ROLE', `--role is required: one of ${TURN_ROLES.join(', ')}`);
  }
  return role;
}

/** `turn add`: records one turn with the receipt the host observed, or a whole response. */
export const turnAddCommand = defineCommand({
  path: ['turn', 'add'],
  summary:
    'Records one turn of a session; an assistant turn carries the receipt the host observed.',
  options: {
    ...SESSION_OPTION,
    ...SUBJECT_OPTION,
    role: { kind: 'choice', choices: TURN_ROLES, invalid: 'UNKNOWN_ROLE', help: 'who spoke' },
    text: { kind: 'text', value: 'T', help: 'what was said' },
    tools: { kind: 'list', value: 'a,b', help: 'the tools that ran for this reply' },
    sources: { kind: 'list', value: 'u1,u2', help: 'the sources those tools read' },
    'no-tools': { kind: 'flag', help: 'the host saw no tool run for this reply' },
    utility: { kind: 'flag', help: 'a utility generation (title, insight): counted, not recorded' },
    corrective: { kind: 'flag', help: 'this user turn corrects the agent' },
    speaker: { kind: 'text', value: 'NAME', help: 'who spoke, when a role has several people' },
    'blocks-file': {
      kind: 'text',
      value: 'response.json',
      help: 'a model response’s content blocks: its text and its receipt (instead of --text)',
    },
  },
  notes: [
    'With --blocks-file, the text and the receipt come from the blocks: no --text, --tools,',
    '--sources or --no-tools, and --role is assistant or left out.',
  ],
  async run(ctx) {
    const { values } = ctx;
    const sessionId = values.session;
    const blocksFile = values['blocks-file'];
    let result: AddTurnResult;
    if (blocksFile !== undefined) {
      if (
        values.text !== undefined ||
        values.tools !== undefined ||
        values.sources !== undefined ||
        values['no-tools']
      ) {
        throw new EngineError(
          'INVALID_ARGUMENT',
          '--blocks-file carries the text and the receipt; do not combine it with --text, --tools, --sources or --no-tools',
        );
      }
      if (values.role !== undefined && values.role !== 'assistant') {
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
      result = await ctx.withSubject(values.subject, (me) =>
        me.turns.recordResponse({ sessionId, blocks }),
      );
    } else {
      const role = requireRole(values.role);
      const { tools, sources, speaker } = values;
      result = await ctx.withSubject(values.subject, (me) =>
        me.turns.add({
          sessionId,
          role,
          content: values.text ?? '',
          receipt: {
            ...(tools === undefined ? {} : { tools }),
            ...(sources === undefined ? {} : { sources }),
            noTools: values['no-tools'],
          },
          utility: values.utility,
          corrective: values.corrective,
          ...(speaker === undefined ? {} : { speaker }),
        }),
      );
    }
    const out = describe(result);
    ctx.print(out.json, () => out.text);
  },
});
