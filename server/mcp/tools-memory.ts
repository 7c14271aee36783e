import { z } from 'zod';
import { FACT_ORIGINS, RECALL_KINDS, type SubjectHandle } from '../../src/index.js';
import { renderFactLine, renderProposeAnswer, recallForModel, shownText } from '../../src/rules.js';
import {
  Attestation as AttestationShape,
  Fact as FactEntity,
  RecallItem as RecallItemEntity,
} from '../http/entities.js';
import { exact, send } from '../http/route-kit.js';
import { defineTool, type McpToolAdapter } from './mcp-tool.js';
import { LIMITS, freeText, idText, isoDate, positiveInt, text } from './mcp-schemas.js';

const proposalInput = z.strictObject({
  slot: text(LIMITS.slot).describe('what_i_know_about_user, stances, corrections_received, …'),
  key: text(LIMITS.key).optional(),
  text: freeText.describe('the memory, one line (at most 2,000 characters)'),
  origin: z.enum(FACT_ORIGINS).describe('did, saw, inferred or summarized'),
  evidence: z
    .strictObject({
      turn: positiveInt().optional().describe('the cited turn’s number (seq) in this session'),
      quote: freeText.optional().describe('the user’s own words, exactly as in that turn'),
      tool: text(LIMITS.tool)
        .optional()
        .describe('for origin did: the tool on that turn’s receipt'),
    })
    .optional(),
  validFrom: isoDate.optional(),
  validTo: isoDate.optional(),
});

const proposeMemories = defineTool({
  name: 'propose_memories',
  title: 'Propose memories',
  description:
    'Proposes memories from one session. Each must quote the user’s own words from a numbered user turn of that session (evidence.turn + evidence.quote), or, for origin did, cite a tool on that turn’s receipt. What passes waits in the review pile, not live; what fails is dropped with a code and a reason. Nothing proposed becomes live through any tool.',
  input: z.strictObject({
    sessionId: idText,
    proposals: z.array(proposalInput).min(1).max(100),
  }),
  output: z.object({
    proposed: z.array(
      z.object({
        id: z.string(),
        slot: z.string(),
        text: z.string(),
        attested: z.boolean(),
        attestation: AttestationShape.nullable(),
        status: z.string(),
      }),
    ),
    dropped: z.array(
      z.object({ slot: z.string(), text: z.string(), code: z.string(), reason: z.string() }),
    ),
  }),
  async run(me, input) {
    const result = await me.gate.propose({
      sessionId: input.sessionId,
      proposals: exact(input.proposals),
      proposedBy: 'agent',
    });
    return {
      structured: { proposed: result.proposed, dropped: result.dropped },
      text: renderProposeAnswer(result),
    };
  },
});

// one schema for a recall item on both faces: the HTTP API's, from its OpenAPI entities
const recallItemSchema = RecallItemEntity;

const recall = defineTool({
  name: 'recall',
  title: 'Recall',
  description:
    'Searches this subject’s recorded turns and live facts, each item with its passport (origin did/saw/inferred/summarized or turn, status, date, evidence, receipt). Reads only. An empty answer says what was searched; when every kind and session was searched, no record exists: say so.',
  readOnly: true,
  input: z.strictObject({
    query: freeText,
    k: z.int().min(1).max(200).optional(),
    sessionId: idText.optional().describe('only this session’s turns, and facts cited in it'),
    includeHistory: z.boolean().optional().describe('also facts that are not live, labelled'),
    kinds: z.array(z.enum(RECALL_KINDS)).min(1).max(2).optional(),
  }),
  output: z.object({ items: z.array(recallItemSchema) }),
  async run(me, input) {
    const { items, text } = await recallForModel(
      (query, o) =>
        me.recall.search(query, {
          ...o,
          ...(input.includeHistory === undefined ? {} : { includeHistory: input.includeHistory }),
        }),
      input.query,
      {
        ...(input.k === undefined ? {} : { k: input.k }),
        ...(input.sessionId === undefined ? {} : { session: input.sessionId }),
        ...(input.kinds === undefined ? {} : { kinds: input.kinds }),
      },
    );
    return { structured: { items }, text };
  },
});

const listMemories = defineTool({
  name: 'list_memories',
  title: 'List live memories',
  description:
    'Lists live memory, each fact with its passport (origin did/saw/inferred/summarized, date, evidence, the gate’s verdict on its quote). Reads only. What is not here is not live memory: proposals still wait for review, and nothing else may be stated as known.',
  readOnly: true,
  input: z.strictObject({}),
  output: z.object({ facts: z.array(FactEntity) }),
  async run(me) {
    const [facts, timeZone] = await Promise.all([me.facts.live(), me.arrival.timeZone()]);
    return {
      // as the HTTP face sends the same entity (GET /v1/facts)
      structured: { facts: send(z.array(FactEntity), facts) },
      text:
        facts.length === 0
          ? 'Live memory is empty: no fact is signed by the owner yet.'
          : facts.map((f) => `${f.id} ${renderFactLine(f, timeZone)}`).join('\n'),
    };
  },
});

/** The arrival as the tool, the prompt and the resource give it. */
export const arrivalSchema = z.object({
  manifestId: z.string(),
  surface: z.string(),
  sessionId: z.string().nullable(),
  tools: z.array(z.string()),
  blocks: z.array(
    z.object({ name: z.string(), tier: z.string(), text: z.string(), degraded: z.boolean() }),
  ),
  text: z.string(),
});

/** The surface an MCP client arrives on unless it names another. */
export const DEFAULT_SURFACE = 'mcp';

/** The incoming user message an arrival may be given (the engine's bound: 20,000 characters). */
export const arrivalMessage = text(20_000)
  .optional()
  .describe(
    'the incoming user message: the arrival recalls the memories relevant to it (not recorded)',
  );

/** Assembles an arrival (which records its manifest) and shapes it for MCP. */
export async function arrivalJson(
  me: SubjectHandle,
  surface: string,
  sessionId: string | undefined,
  message?: string,
): Promise<z.input<typeof arrivalSchema>> {
  const a = await me.arrival.assemble({
    surface,
    ...(sessionId === undefined ? {} : { sessionId }),
    ...(message === undefined ? {} : { message }),
  });
  // the blocks are rendered; the surface and tool names are stored strings, shown here
  return {
    manifestId: a.manifestId,
    surface: shownText(a.surface, 'lines'),
    sessionId: a.sessionId,
    tools: a.tools.map((tool) => shownText(tool, 'lines')),
    blocks: a.blocks.map((b) => ({
      name: b.name,
      tier: b.tier,
      text: b.text,
      degraded: b.degraded,
    })),
    text: a.text,
  };
}

const getArrival = defineTool({
  name: 'get_arrival',
  title: 'Get the arrival context',
  description:
    'The context to read before answering: standing rules, live memory with passports, open commitments with their true count, recent actions and retractions, falsifiers due, and how many proposals await review. Pass the incoming user message as `message` to also get the recorded turns and live facts relevant to it. Each arrival records a manifest of what it gave.',
  input: z.strictObject({
    surface: text(64).optional().describe(`the surface (default ${DEFAULT_SURFACE})`),
    sessionId: idText.optional(),
    message: arrivalMessage,
  }),
  output: arrivalSchema,
  rendered: true,
  async run(me, input) {
    const arrival = await arrivalJson(
      me,
      input.surface ?? DEFAULT_SURFACE,
      input.sessionId,
      input.message,
    );
    return { structured: arrival, text: arrival.text };
  },
});

/** Proposing, recalling and arriving. */
export const MEMORY_TOOLS: readonly McpToolAdapter[] = [
  proposeMemories,
  recall,
  getArrival,
  listMemories,
];
