import { z } from '@hono/zod-openapi';
import { ACTION_STATUSES, COMMITMENT_STATUSES, type Engine } from '../../src/index.js';
import { shownJson, shownText } from '../../src/rules.js';
import { ActionRecord, Arrival, Commitment, ManifestDiff, RegisteredTool } from './entities.js';
import {
  apiRoute,
  enginePage,
  exact,
  jsonResponse,
  pageOf,
  send,
  sendRendered,
  type HttpApp,
} from './route-kit.js';
import {
  DateTimeIn,
  EmptyBody,
  Id,
  idParam,
  LIMITS,
  PageInfo,
  pageQuery,
  Surface,
  text,
} from './schemas.js';

/** The longest incoming message arrival takes (the engine's bound, refused here first). */
const MESSAGE_LENGTH = 20_000;

const AssembleBody = z.strictObject({
  surface: Surface,
  sessionId: Id.optional(),
  message: text(MESSAGE_LENGTH).optional().openapi({
    description:
      'the incoming user message: the relevant block recalls turns and live facts for it (not recorded)',
  }),
});

const DiffQuery = z
  .strictObject({ surface: Surface.optional(), manifestId: Id.optional() })
  .refine((q) => (q.surface === undefined) !== (q.manifestId === undefined), {
    message: 'name exactly one of surface and manifestId',
  });

const AddCommitment = z.strictObject({
  title: text().min(1),
  due: z
    .string()
    .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/, { message: 'must be a date, YYYY-MM-DD' })
    .optional(),
});

const RecordAction = z.strictObject({
  tool: text(LIMITS.tool).min(1),
  surface: Surface,
  target: text().min(1),
  status: z.enum(ACTION_STATUSES).optional(),
  completedAt: DateTimeIn.optional(),
});

const CommitmentParam = idParam('commitmentId');

export function registerArrivalRoutes(app: HttpApp, engine: Engine): void {
  app.openapi(
    apiRoute(engine, 'arrival.assemble', {
      request: {
        body: { required: true, content: { 'application/json': { schema: AssembleBody } } },
      },
      responses: jsonResponse(Arrival, 'the arrival: blocks in tier order, tools, text'),
    }),
    async (c) => {
      const arrival = await c.var.caller.handle.arrival.assemble(exact(c.req.valid('json')));
      // a degraded block's own error (a host block's SQL, say) stays in the server
      const blocks = arrival.blocks.map((b) => ({
        ...b,
        reason: b.reason === null ? null : b.reason === 'timeout' ? 'timeout' : 'failed',
      }));
      // the blocks are rendered; the surface and tool names are stored strings, shown here
      const tools = arrival.tools.map((tool) => shownText(tool, 'lines'));
      const surface = shownText(arrival.surface, 'lines');
      // a memory's line is rendered; its passport's stored strings (slot, quote, tool) are shown
      const memories = arrival.memories.map((m) => ({
        ...m,
        passport: shownJson(m.passport),
      }));
      return c.json(sendRendered(Arrival, { ...arrival, surface, tools, blocks, memories }), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'arrival.diff', {
      request: { query: DiffQuery },
      responses: jsonResponse(ManifestDiff, 'the diff'),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const diff = await c.var.caller.handle.arrival.diff(
        q.manifestId !== undefined ? { manifestId: q.manifestId } : { surface: q.surface ?? '' },
      );
      return c.json(send(ManifestDiff, diff), 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'commitments.list', {
      request: {
        query: z.strictObject({ status: z.enum(COMMITMENT_STATUSES).optional(), ...pageQuery }),
      },
      responses: jsonResponse(
        z.object({ commitments: z.array(Commitment), page: PageInfo }),
        'a page of commitments',
      ),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const { items, page } = await enginePage(q, (p) =>
        c.var.caller.handle.commitments.list({
          ...p,
          ...(q.status === undefined ? {} : { status: q.status }),
        }),
      );
      return c.json({ commitments: send(z.array(Commitment), items), page }, 200);
    },
  );

  app.openapi(
    apiRoute(engine, 'commitments.add', {
      request: {
        body: { required: true, content: { 'application/json': { schema: AddCommitment } } },
      },
      responses: {
        201: {
          description: 'the commitment',
          content: { 'application/json': { schema: Commitment } },
        },
      },
    }),
    async (c) => {
      const commitment = await c.var.caller.handle.commitments.add(exact(c.req.valid('json')));
      return c.json(send(Commitment, commitment), 201);
    },
  );

  for (const action of ['done', 'drop'] as const) {
    app.openapi(
      apiRoute(engine, `commitments.${action}`, {
        request: {
          params: CommitmentParam,
          body: { required: false, content: { 'application/json': { schema: EmptyBody } } },
        },
        responses: jsonResponse(Commitment, 'the commitment'),
      }),
      async (c) => {
        const { commitmentId } = c.req.valid('param');
        const commitments = c.var.caller.handle.commitments;
        const changed =
          action === 'done'
            ? await commitments.done(commitmentId)
            : await commitments.drop(commitmentId);
        return c.json(send(Commitment, changed), 200);
      },
    );
  }

  app.openapi(
    apiRoute(engine, 'actions.record', {
      request: {
        body: { required: true, content: { 'application/json': { schema: RecordAction } } },
      },
      responses: {
        201: {
          description: 'the action',
          content: { 'application/json': { schema: ActionRecord } },
        },
      },
    }),
    async (c) => {
      const action = await c.var.caller.handle.actions.record(exact(c.req.valid('json')));
      return c.json(send(ActionRecord, action), 201);
    },
  );

  app.openapi(
    apiRoute(engine, 'tools.list', {
      request: { query: z.strictObject({ surface: Surface.optional(), ...pageQuery }) },
      responses: jsonResponse(
        z.object({ tools: z.array(RegisteredTool), page: PageInfo }),
        'a page of tools',
      ),
    }),
    async (c) => {
      const q = c.req.valid('query');
      const all = await c.var.caller.handle.tools.list();
      const tools =
        q.surface === undefined ? all : all.filter((t) => t.surfaces.includes(q.surface ?? ''));
      const { items, page } = pageOf(tools, q);
      return c.json({ tools: send(z.array(RegisteredTool), items), page }, 200);
    },
  );
}
