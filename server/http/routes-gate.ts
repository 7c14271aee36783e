import { z } from '@hono/zod-openapi';
import { FACT_ORIGINS, type Engine } from '../../src/index.js';
import {
  DroppedProposal,
  Fact,
  LiveIntegrity,
  PendingProposal,
  ProposeResult,
} from './entities.js';
import {
  apiRoute,
  enginePage,
  DEFAULT_PAGE,
  exact,
  jsonResponse,
  pageOf,
  send,
  type HttpApp,
} from './route-kit.js';
import { Id, LIMITS, PageInfo, pageQuery, text } from './schemas.js';

/**
 * One proposed memory. The schema holds the types; the gate holds the rules (a quote not in its
 * turn, an unknown slot, a text over 2,000 code points…) and drops a failing item with its code,
 * logged, while the rest of the batch goes on.
 */
const ProposalItem = z
  .strictObject({
    slot: text(LIMITS.slot).min(1),
    key: text(LIMITS.key).optional(),
    text: text(),
    origin: z.enum(FACT_ORIGINS),
    evidence: z
      .strictObject({
        turn: z.number().int().min(1).max(LIMITS.maxInt).optional(),
        quote: text().optional(),
        tool: text(LIMITS.tool).optional(),
      })
      .optional()
      .openapi({ description: 'a user quote {turn, quote}, or a receipt {turn, tool}' }),
    validFrom: text(64).optional(),
    validTo: text(64).optional(),
  })
  .openapi('Proposal');

const ProposeBody = z.strictObject({
  sessionId: Id,
  proposals: z.array(ProposalItem).min(1).max(LIMITS.proposals),
});

export function registerGateRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'gate.propose', {
      request: {
        body: { required: true, content: { 'application/json': { schema: ProposeBody } } },
      },
      responses: jsonResponse(ProposeResult, 'what went to the pile, and what was dropped and why'),
    }),
    async (c) => {
      const { sessionId, proposals } = c.req.valid('json');
      const caller = c.var.caller;
      const result = await caller.handle.gate.propose({
        sessionId,
        proposals: exact(proposals),
        proposedBy: `agent:${caller.tokenId ?? 'local'}`,
      });
      return c.json(send(ProposeResult, result), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'gate.pile', {
      request: { query: z.strictObject(pageQuery) },
      responses: jsonResponse(
        z.object({ pending: z.array(PendingProposal), page: PageInfo }),
        'a page of the pile',
      ),
    }),
    async (c) => {
      // paged in the store: only the page's cited turns are read
      const gate = c.var.caller.handle.gate;
      const q = c.req.valid('query');
      const limit = q.limit ?? DEFAULT_PAGE;
      const offset = q.offset ?? 0;
      const [items, total] = await Promise.all([gate.pile({ limit, offset }), gate.pileCount()]);
      const nextOffset = total > offset + limit ? offset + limit : null;
      const page = { limit, offset, nextOffset, truncated: false };
      return c.json({ pending: send(z.array(PendingProposal), items), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'gate.dropped', {
      request: { query: z.strictObject(pageQuery) },
      responses: jsonResponse(
        z.object({ dropped: z.array(DroppedProposal), page: PageInfo }),
        'a page of the dropped log',
      ),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { items, page } = await enginePage(q, (p) => c.var.caller.handle.gate.dropped(p));
      return c.json({ dropped: send(z.array(DroppedProposal), items), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'facts.live', {
      request: { query: z.strictObject({ slot: text(LIMITS.slot).optional(), ...pageQuery }) },
      responses: jsonResponse(
        z.object({ facts: z.array(Fact), page: PageInfo, integrity: LiveIntegrity }),
        'a page of live facts, and whether anything stored was withheld',
      ),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { facts } = c.var.caller.handle;
      const live = await facts.live();
      const { ok, warning } = await facts.integrity();
      const { items, page } = pageOf(
        q.slot === undefined ? live : live.filter((f) => f.slot === q.slot),
        q,
      );
      return c.json({ facts: send(z.array(Fact), items), page, integrity: { ok, warning } }, 200);
    },
  );
}
