import { z } from 'zod';
import { renderReceiptLine, shownInline } from '../../src/rules.js';
import type { Session, Turn } from '../../src/index.js';
import { defineTool, iso, type McpToolAdapter } from './mcp-tool.js';
import {
  LIMITS,
  compact,
  idText,
  positiveInt,
  sessionSchema,
  text,
  turnSchema,
} from './mcp-schemas.js';

export function turnJson(t: Turn): z.input<typeof turnSchema> {
  return {
    id: t.id,
    sessionId: t.sessionId,
    seq: t.seq,
    role: t.role,
    content: t.content,
    corrective: t.corrective,
    receipt: t.receipt,
    recordedAt: iso(t.recordedAt),
    speaker: t.speaker,
  };
}

function sessionJson(s: Session): z.input<typeof sessionSchema> {
  return { id: s.id, title: s.title, turnCount: s.turnCount, createdAt: iso(s.createdAt) };
}

const startSession = defineTool({
  name: 'start_session',
  title: 'Start a session',
  description:
    'Starts a conversation session. Turns are numbered from 1 within it; history is kept per session, never in a global bucket.',
  // No model-chosen id: the engine names the session, so a model cannot aim a session at an id
  // a host uses (ids are unique per subject since migration 12; no other subject's id collides).
  input: z.strictObject({ title: text(LIMITS.free).optional().describe('a short title') }),
  output: z.object({ session: sessionSchema }),
  async run(me, input) {
    const session = await me.sessions.create(compact(input));
    return {
      structured: { session: sessionJson(session) },
      text: `Started session ${session.id}.`,
    };
  },
});

const listSessions = defineTool({
  name: 'list_sessions',
  title: 'List sessions',
  description: 'Lists this subject’s sessions, newest first, with their turn counts.',
  readOnly: true,
  input: z.strictObject({ limit: positiveInt(1000).optional() }),
  output: z.object({ sessions: z.array(sessionSchema) }),
  async run(me, input) {
    const sessions = await me.sessions.list(compact(input));
    return {
      structured: { sessions: sessions.map(sessionJson) },
      text:
        sessions.length === 0
          ? 'No sessions recorded.'
          : sessions
              .map(
                (s) =>
                  `${shownInline(s.id)}: ${s.title === null ? '(untitled)' : shownInline(s.title)}, ${s.turnCount} turns`,
              )
              .join('\n'),
    };
  },
});

const receiptInput = z
  .strictObject({
    tools: z.array(text(LIMITS.tool)).max(1000).optional().describe('the tools that ran'),
    sources: z.array(text(LIMITS.tool)).max(1000).optional().describe('what they returned'),
    noTools: z.boolean().optional().describe('true: no tool ran on this turn'),
  })
  .describe('for an assistant turn: the tools that ran, or noTools; omitted means unknown');

const recordTurn = defineTool({
  name: 'record_turn',
  title: 'Record a turn',
  description:
    'Records one user or assistant turn in a session, and returns its number (seq) and its receipt. An assistant turn carries a receipt: the tools that ran and the sources they returned, noTools when none ran, or nothing (unknown). Receipt lines imitated inside the reply text are cut out.',
  input: z.strictObject({
    sessionId: idText,
    role: z.enum(['user', 'assistant']),
    content: text(LIMITS.turn),
    receipt: receiptInput.optional(),
    speaker: text(200).optional().describe('who spoke, when a role has more than one person'),
  }),
  output: z.object({
    recorded: z.boolean(),
    turn: turnSchema.nullable(),
    strippedReceipts: z.int(),
  }),
  async run(me, input) {
    const { receipt, ...rest } = input;
    const result = await me.turns.add({
      ...compact(rest),
      ...(receipt === undefined ? {} : { receipt: compact(receipt) }),
    });
    if (!result.recorded) {
      return {
        structured: { recorded: false, turn: null, strippedReceipts: 0 },
        text: `Counted as a ${result.utility} generation, not recorded as a turn.`,
      };
    }
    const { turn, strippedReceipts } = result;
    const line = turn.receipt === null ? '' : `\n${renderReceiptLine(turn.receipt)}`;
    const stripped =
      strippedReceipts > 0
        ? `\n${strippedReceipts} imitated receipt line(s) were cut from the text: only memledger writes receipts.`
        : '';
    return {
      structured: { recorded: true, turn: turnJson(turn), strippedReceipts },
      text: `Recorded turn #${turn.seq} (${turn.role}) in session ${turn.sessionId}.${line}${stripped}`,
    };
  },
});

const readHistory = defineTool({
  name: 'read_history',
  title: 'Read a session’s history',
  description:
    'The transcript of one session, each assistant turn beside its receipt (tools ran, no tools ran, or unknown). Truncation drops the oldest turns first and never cuts a receipt.',
  readOnly: true,
  input: z.strictObject({
    sessionId: idText,
    last: positiveInt().optional().describe('only the last N turns'),
    budgetChars: positiveInt().optional().describe('upper bound on the text, in characters'),
  }),
  output: z.object({ sessionId: z.string(), text: z.string() }),
  rendered: true,
  async run(me, input) {
    const { sessionId, ...options } = input;
    const rendered = await me.history.render(sessionId, compact(options));
    return {
      structured: { sessionId: input.sessionId, text: rendered },
      text: rendered.trim() === '' ? 'No turns are recorded in this session.' : rendered,
    };
  },
});

/** Sessions, turns and history. */
export const CONVERSATION_TOOLS: readonly McpToolAdapter[] = [
  startSession,
  listSessions,
  recordTurn,
  readHistory,
];
