import { z } from '@hono/zod-openapi';
import { RECALL_KINDS, type Engine, type RecallKind } from '../../src/index.js';
import { RecallItem } from './entities.js';
import { apiRoute, jsonResponse, send, type HttpApp } from './route-kit.js';
import { boolQuery, Id, intQuery, text } from './schemas.js';

const Kinds = z
  .string()
  .max(64)
  .transform((s) => s.split(','))
  .pipe(z.array(z.enum(RECALL_KINDS)).min(1))
  .openapi({ type: 'string', description: `comma-separated: ${RECALL_KINDS.join(', ')}` });

const RecallQuery = z.strictObject({
  q: text(4_096).min(1).openapi({ description: 'what to recall' }),
  k: intQuery(1, 200).optional().openapi({ description: 'how many items (1-200, default 10)' }),
  session: Id.optional().openapi({ description: "only this session's turns and facts" }),
  includeHistory: boolQuery.optional(),
  kinds: Kinds.optional(),
  vectors: boolQuery.optional(),
});

export function registerRecallRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'recall.search', {
      request: { query: RecallQuery },
      responses: jsonResponse(z.object({ items: z.array(RecallItem) }), 'the recalled items'),
    }),
    async (c) => {
      const { q, kinds, ...options } = c.req.valid('query');
      const items = await c.var.caller.handle.recall.search(q, {
        ...(options.k === undefined ? {} : { k: options.k }),
        ...(options.session === undefined ? {} : { session: options.session }),
        ...(options.includeHistory === undefined ? {} : { includeHistory: options.includeHistory }),
        ...(options.vectors === undefined ? {} : { vectors: options.vectors }),
        ...(kinds === undefined ? {} : { kinds: kinds as RecallKind[] }),
      });
      return c.json({ items: send(z.array(RecallItem), items) }, 200);
    },
  );
}
