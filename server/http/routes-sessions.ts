import { z } from '@hono/zod-openapi';
import { TURN_ROLES, type Engine } from '../../src/index.js';
import { AddTurnResult, HistoryMessage, Session, Turn } from './entities.js';
import {
  apiRoute,
  enginePage,
  exact,
  jsonResponse,
  send,
  sendRendered,
  type HttpApp,
} from './route-kit.js';
import {
  DateTimeIn,
  Id,
  idParam,
  intQuery,
  jsonValueProblem,
  LIMITS,
  PageInfo,
  pageQuery,
  text,
} from './schemas.js';

const SessionParam = idParam('sessionId');

const CreateSession = z.strictObject({
  id: Id.optional().openapi({ description: 'a host-chosen id (SESSION_EXISTS when taken)' }),
  title: text().optional(),
});

const HostReceipt = z
  .strictObject({
    tools: z.array(text(LIMITS.tool)).max(LIMITS.listItems).optional(),
    sources: z.array(text(LIMITS.tool)).max(LIMITS.listItems).optional(),
    noTools: z.boolean().optional(),
  })
  .openapi('HostReceipt', {
    description:
      'What the host saw run: `{tools, sources}`, or `{noTools: true}`; omit the receipt when nothing is known (unknown).',
  });

const AddTurn = z.strictObject({
  role: z.enum(TURN_ROLES),
  content: text(LIMITS.content),
  receipt: HostReceipt.optional(),
  utility: z
    .boolean()
    .optional()
    .openapi({ description: 'a title or insight generation: counted, never recorded' }),
  corrective: z.boolean().optional(),
  speaker: text(200).optional(),
  at: DateTimeIn.optional().openapi({ description: 'when it was said (importing); never future' }),
});

const ResponseBody = z.strictObject({
  blocks: z
    .array(z.looseObject({ type: text(256).min(1) }))
    .max(LIMITS.blocks)
    .superRefine((blocks, ctx) => {
      const problem = jsonValueProblem(blocks);
      if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
    })
    .openapi({ description: "one response's content blocks (or successive tool rounds), as sent" }),
});

const lastQuery = intQuery(1, LIMITS.maxInt)
  .optional()
  .openapi({ description: 'only the last N turns' });

export function registerSessionRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'sessions.list', {
      request: { query: z.strictObject(pageQuery) },
      responses: jsonResponse(
        z.object({ sessions: z.array(Session), page: PageInfo }),
        'a page of sessions',
      ),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { items, page } = await enginePage(q, (p) => c.var.caller.handle.sessions.list(p));
      return c.json({ sessions: send(z.array(Session), items), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'sessions.create', {
      request: {
        body: { required: false, content: { 'application/json': { schema: CreateSession } } },
      },
      responses: {
        201: { description: 'the session', content: { 'application/json': { schema: Session } } },
      },
    }),
    async (c) => {
      const session = await c.var.caller.handle.sessions.create(exact(c.req.valid('json')));
      return c.json(send(Session, session), 201);
    },
  );

  app.openapi(
    apiRoute(engine, 'turns.add', {
      request: {
        params: SessionParam,
        body: { required: true, content: { 'application/json': { schema: AddTurn } } },
      },
      responses: jsonResponse(AddTurnResult, 'the recorded turn, or the utility count'),
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const body = c.req.valid('json');
      const input = { sessionId, ...exact(body) };
      return c.json(send(AddTurnResult, await c.var.caller.handle.turns.add(input)), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'turns.recordResponse', {
      request: {
        params: SessionParam,
        body: { required: true, content: { 'application/json': { schema: ResponseBody } } },
      },
      responses: jsonResponse(AddTurnResult, 'the recorded turn'),
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const { blocks } = c.req.valid('json');
      const result = await c.var.caller.handle.turns.recordResponse({ sessionId, blocks });
      return c.json(send(AddTurnResult, result), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'history.turns', {
      request: {
        params: SessionParam,
        query: z.strictObject({
          afterSeq: intQuery(0, LIMITS.maxInt)
            .optional()
            .openapi({ description: 'only turns after this seq (take `nextAfterSeq`)' }),
          limit: pageQuery.limit,
          last: lastQuery,
        }),
      },
      responses: jsonResponse(
        z.object({ turns: z.array(Turn), nextAfterSeq: z.number().int().nullable() }),
        'a page of turns',
      ),
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const { afterSeq = 0, limit = 50, last } = c.req.valid('query');
      const all = await c.var.caller.handle.history.turns(
        sessionId,
        last === undefined ? {} : { last },
      );
      const after = all.filter((t) => t.seq > afterSeq);
      const turns = after.slice(0, limit);
      const nextAfterSeq = after.length > limit ? (turns[turns.length - 1]?.seq ?? null) : null;
      return c.json({ turns: send(z.array(Turn), turns), nextAfterSeq }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'history.render', {
      request: {
        params: SessionParam,
        query: z.strictObject({
          last: lastQuery,
          budgetChars: intQuery(1, LIMITS.maxInt).optional(),
          maxTurnChars: intQuery(1, LIMITS.maxInt).optional(),
        }),
      },
      responses: jsonResponse(z.object({ text: z.string() }), 'the transcript'),
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const { last, budgetChars, maxTurnChars } = c.req.valid('query');
      const rendered = await c.var.caller.handle.history.render(sessionId, {
        ...(last === undefined ? {} : { last }),
        ...(budgetChars === undefined ? {} : { budgetChars }),
        ...(maxTurnChars === undefined ? {} : { maxTurnChars }),
      });
      return c.json({ text: rendered }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'history.messages', {
      request: { params: SessionParam, query: z.strictObject({ last: lastQuery }) },
      responses: jsonResponse(z.object({ messages: z.array(HistoryMessage) }), 'the messages'),
    }),
    async (c) => {
      const { sessionId } = c.req.valid('param');
      const { last } = c.req.valid('query');
      const messages = await c.var.caller.handle.history.messages(
        sessionId,
        last === undefined ? {} : { last },
      );
      // rendered by history (contents shown, receipt lines memledger's own)
      return c.json({ messages: sendRendered(z.array(HistoryMessage), messages) }, 200);
    },
  );
}
