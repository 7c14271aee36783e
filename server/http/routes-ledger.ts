import { z } from '@hono/zod-openapi';
import {
  CAUGHT_BY,
  RETRACTION_VERDICTS,
  type Engine,
  type FactId,
  type RetractionId,
} from '../../src/index.js';
import { Retraction } from './entities.js';
import { RetractionProbeIn } from './probe-spec.js';
import { apiRoute, exact, jsonResponse, pageOf, send, type HttpApp } from './route-kit.js';
import { DateTimeIn, Id, idParam, LIMITS, PageInfo, pageQuery, text } from './schemas.js';

const RetractionParam = idParam('retractionId');

const RetractBody = z.strictObject({
  claim: text(),
  stoodOn: text(),
  whyWrong: text(),
  corrected: text(),
  procedure: text(),
  passObservation: text().openapi({ description: 'what keeps the retraction standing' }),
  overturnCondition: text().openapi({ description: 'what overturns it; must differ' }),
  caughtBy: z.enum(CAUGHT_BY).optional(),
  claimedAt: DateTimeIn.optional(),
  claimSurface: text().optional(),
  claimRef: text().optional(),
  tags: z.array(text()).max(LIMITS.listItems).optional(),
  correctedAt: DateTimeIn.optional(),
  dueDays: z.number().int().min(0).max(36_500).optional(),
  factId: Id.optional().openapi({ description: 'a live fact this retraction takes down' }),
  probe: RetractionProbeIn.optional(),
});

/** The one settlement a token may make: by running the calibrated probe. A verdict is the owner's. */
const SettleBody = z.strictObject({ runProbe: z.literal(true) });

const RetractionPage = z.object({ retractions: z.array(Retraction), page: PageInfo });

export function registerLedgerRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'ledger.retract', {
      request: {
        body: { required: true, content: { 'application/json': { schema: RetractBody } } },
      },
      responses: {
        201: {
          description: 'the retraction',
          content: { 'application/json': { schema: Retraction } },
        },
      },
    }),
    async (c) => {
      const { factId, ...body } = c.req.valid('json');
      const retraction = await c.var.caller.handle.ledger.retract({
        ...exact(body),
        ...(factId === undefined ? {} : { factId: factId as FactId }),
      });
      return c.json(send(Retraction, retraction), 201);
    },
  );

  app.openapi(
    apiRoute(engine, 'ledger.due', {
      request: { query: z.strictObject(pageQuery) },
      responses: jsonResponse(RetractionPage, 'a page of due retractions'),
    }),
    async (c) => {
      const { items, page } = pageOf(await c.var.caller.handle.ledger.due(), c.req.valid('query'));
      return c.json({ retractions: send(z.array(Retraction), items), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'ledger.list', {
      request: {
        query: z.strictObject({ verdict: z.enum(RETRACTION_VERDICTS).optional(), ...pageQuery }),
      },
      responses: jsonResponse(RetractionPage, 'a page of retractions'),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const all = await c.var.caller.handle.ledger.list(
        q.verdict === undefined ? {} : { verdict: q.verdict },
      );
      const { items, page } = pageOf(all, q);
      return c.json({ retractions: send(z.array(Retraction), items), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'ledger.settleByProbe', {
      request: {
        params: RetractionParam,
        body: { required: true, content: { 'application/json': { schema: SettleBody } } },
      },
      responses: jsonResponse(Retraction, 'the settled retraction'),
    }),
    async (c) => {
      const retractionId = c.req.valid('param').retractionId as RetractionId;
      const settled = await c.var.caller.handle.ledger.settle({ retractionId, runProbe: true });
      return c.json(send(Retraction, settled), 200);
    },
  );
}
